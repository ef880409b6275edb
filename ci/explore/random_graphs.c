/* Random sequences of graph and stream-capture driver calls, for comparing the mock with
 * a real driver call by call (ci/gpu-random-graphs.sh runs it on both and diffs).
 *
 *   random_graphs SEED STEPS
 *
 * The same seed makes the same sequence; each call prints one line: the call with its
 * arguments named symbolically (graphs g1, nodes n3, executables e2, graph allocations
 * a1, streams s1/s2/legacy), its result's name and symbolic out-values. Handles and
 * addresses are never printed. A node handle the program does not know prints as "?".
 *
 * Safe on a real driver by construction: memsets, copies and kernels write only the
 * program's own allocations, each writer node a 64-byte slot of its own (so unordered
 * nodes never race, and a checksum after a launch is determined); host nodes only bump
 * a counter; event-wait nodes wait on an event recorded and completed at setup; a graph
 * is launched only when the program's model of it has no cycle and every free node
 * frees an allocation of the same graph ordered before it; nothing timing-dependent is
 * printed (launches are synchronised before anything is read). One deliberate hazard,
 * rare: a destroyed node's handle passed as a dependency (printed "dead:nK"), as the
 * graph API's validation of stale handles is part of what is compared. A sticky error
 * (the context is lost) is printed and ends the sequence.
 *
 * Calls that crash a driver are not made: a graph made its own child graph crashed the
 * H200 (driver 580.159.04, SIGSEGV, runs/2026-12-03-h200-session16: seeds 5-11, 19-21,
 * 23, 24, 33-36, 38, 39) unless the graph counted as one with memory nodes (then
 * NOT_SUPPORTED) or a dependency was another graph's node or the array NULL (then
 * INVALID_VALUE). Such a call prints "skipped (...)" in its place; it draws the same
 * random numbers, so every other call of a seed stays as it was.
 *
 *   gcc -I$CUDA_INCLUDE ci/explore/random_graphs.c -lcuda -ldl -o random_graphs
 */
#include <cuda.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *PTX =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry bump(.param .u64 p, .param .u32 n, .param .u32 v)\n{\n"
    "  .reg .pred %p1;\n  .reg .b32 %r<8>;\n  .reg .b64 %rd<4>;\n"
    "  ld.param.u64 %rd1, [p];\n  ld.param.u32 %r1, [n];\n  ld.param.u32 %r2, [v];\n"
    "  mov.u32 %r3, %tid.x;\n  mov.u32 %r4, %ctaid.x;\n  mov.u32 %r5, %ntid.x;\n"
    "  mad.lo.u32 %r6, %r4, %r5, %r3;\n  setp.ge.u32 %p1, %r6, %r1;\n  @%p1 bra DONE;\n"
    "  cvta.to.global.u64 %rd1, %rd1;\n  mul.wide.u32 %rd2, %r6, 4;\n"
    "  add.u64 %rd3, %rd1, %rd2;\n  atom.global.add.u32 %r7, [%rd3], %r2;\n"
    "DONE:\n  ret;\n}\n";

/* ---- seed-determined choices ---- */
static unsigned long long rng_state;
static unsigned long long next64(void) {
    unsigned long long z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
static int rnd(int n) { return n <= 0 ? 0 : (int)(next64() % (unsigned)n); }
static int chance(int percent) { return rnd(100) < percent; }

/* ---- output ---- */
static int line_no;
static char line[4096];
static size_t line_len;
static void put(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line + line_len, sizeof line - line_len, fmt, ap);
    va_end(ap);
    if (n > 0) line_len += (size_t)n;
    if (line_len >= sizeof line) line_len = sizeof line - 1;
}
static void finish(void) {
    printf("%d %s\n", ++line_no, line);
    fflush(stdout);
    line_len = 0;
    line[0] = 0;
}

static const char *code_name(CUresult r) {
    const char *s = NULL;
    if (cuGetErrorName(r, &s) != CUDA_SUCCESS || !s) {
        static char buf[32];
        snprintf(buf, sizeof buf, "CUresult(%d)", (int)r);
        return buf;
    }
    return s;
}

static int calls, successes;
static void teardown(void);
/* Prints " = CODE" and ends the sequence when the context is lost. */
static CUresult result(CUresult r) {
    calls++;
    if (r == CUDA_SUCCESS) successes++;
    put(" = %s", code_name(r));
    switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_UNKNOWN:
        finish();
        printf("sticky error: sequence ends\n");
        exit(0);
    default:
        break;
    }
    return r;
}

/* ---- the program's model ---- */
#define MAX_GRAPHS 64
#define MAX_NODES 2048
#define MAX_EDGES 8192
#define MAX_EXECS 128
#define MAX_ALLOCS 256
#define MAX_CHILD_SLOTS 64
#define SLOTS 1024
#define SLOT_BYTES 64
#define MAX_GRAPH_NODES 24

enum kind { K_EMPTY, K_MEMSET, K_MEMCPY, K_HOST, K_KERNEL, K_REC, K_WAIT, K_CHILD, K_ALLOC, K_FREE };
static const char *kind_name[] = {"empty", "memset", "memcpy", "host",  "kernel",
                                  "record", "wait",  "child", "alloc", "free"};

struct graph {
    CUgraph h;
    int alive;
    int cyclic_child; /* holds a child whose graph was not launch-safe */
    int opaque_slots[MAX_CHILD_SLOTS];
    int n_opaque; /* slots written by captured nodes the program does not name */
    /* Holds memory nodes, or had a memory node's addition refused only after its
     * dependencies' graph and (an allocation) its parameters passed: the H200 treats
     * both alike (NOT_SUPPORTED to a clone, a child graph of it, node removal). */
    int memory_nodes;
};
struct node {
    CUgraphNode h;
    int graph;
    int alive;
    enum kind kind;
    int slot;                       /* written slot, -1 if none */
    int child_slots[MAX_CHILD_SLOTS]; /* a child node's graph's writes */
    int n_child_slots;
    int child_safe;
    int poisoned; /* accepted parameters meant to be refused: never launched */
    int alloc; /* K_ALLOC: its allocation; K_FREE: the allocation freed (-1: not a graph's) */
};
struct edge {
    int from, to, graph, alive;
};
struct exec {
    CUgraphExec h;
    int alive;
    int graph;
    unsigned long long flags;
    int safe, race_free;
    int allocs[MAX_ALLOCS]; /* allocations a launch leaves live */
    int n_allocs;
};
struct alloc {
    CUdeviceptr ptr;
    int live; /* a launch allocated it and nothing freed it since */
};

static struct graph graphs[MAX_GRAPHS];
static int n_graphs;
static struct node nodes[MAX_NODES];
static int n_nodes;
static struct edge edges[MAX_EDGES];
static int n_edges;
static struct exec execs[MAX_EXECS];
static int n_execs;
static struct alloc allocs[MAX_ALLOCS];
static int n_allocs;
static int next_slot;
static int last_dead = -1;

static CUcontext ctx;
static CUmodule module;
static CUfunction bump;
static CUdeviceptr slots_buf, source_buf;
static CUstream s1, s2;
static CUevent e_rec, e_wait, e_fork, e_join;
static CUdeviceptr captured_allocs[64];
static int n_captured_allocs;

static unsigned counter;
static unsigned increments[4] = {1, 10, 100, 1000};
/* Atomic: a driver may run unordered host nodes on more than one thread. */
static void CUDA_CB host_bump(void *data) { __atomic_fetch_add(&counter, *(unsigned *)data, __ATOMIC_SEQ_CST); }

static int fresh_slot(void) { return next_slot < SLOTS ? next_slot++ : -1; }
static CUdeviceptr slot_ptr(int slot) { return slots_buf + (CUdeviceptr)slot * SLOT_BYTES; }

static const char *node_name(CUgraphNode h) {
    static char buf[8][24];
    static int which;
    char *b = buf[which++ & 7];
    if (!h) return "null";
    for (int i = n_nodes - 1; i >= 0; i--)
        if (nodes[i].alive && nodes[i].h == h) {
            snprintf(b, 24, "n%d", i + 1);
            return b;
        }
    return "?";
}
static const char *stream_name(CUstream s) { return s == s1 ? "s1" : s == s2 ? "s2" : "legacy"; }
static int alloc_named(CUdeviceptr p) {
    for (int i = 0; i < n_allocs; i++)
        if (allocs[i].ptr == p) return i;
    if (n_allocs == MAX_ALLOCS) return -1;
    allocs[n_allocs].ptr = p;
    allocs[n_allocs].live = 0;
    return n_allocs++;
}

static int live_graph(void) {
    int ids[MAX_GRAPHS], n = 0;
    for (int i = 0; i < n_graphs; i++)
        if (graphs[i].alive) ids[n++] = i;
    return n ? ids[rnd(n)] : -1;
}
static int graph_nodes(int g, int *out) {
    int n = 0;
    for (int i = 0; i < n_nodes; i++)
        if (nodes[i].alive && nodes[i].graph == g) out[n++] = i;
    return n;
}
static int live_node(int g) {
    int ids[MAX_NODES];
    int n = graph_nodes(g, ids);
    return n ? ids[rnd(n)] : -1;
}
static int live_exec(void) {
    int ids[MAX_EXECS], n = 0;
    for (int i = 0; i < n_execs; i++)
        if (execs[i].alive) ids[n++] = i;
    return n ? ids[rnd(n)] : -1;
}

static void add_edge(int from, int to) {
    for (int i = 0; i < n_edges; i++)
        if (edges[i].alive && edges[i].from == from && edges[i].to == to) return;
    if (n_edges == MAX_EDGES) return;
    edges[n_edges++] = (struct edge){from, to, nodes[to].graph, 1};
}

/* reach[i*MAX_GRAPH_NODES... ] is too small for a graph's nodes in general: a graph's
 * reachability is computed over its nodes listed in `ids`. */
static void reachability(int g, int *ids, int n, unsigned char *reach) {
    memset(reach, 0, (size_t)n * n);
    for (int e = 0; e < n_edges; e++) {
        if (!edges[e].alive || edges[e].graph != g) continue;
        int a = -1, b = -1;
        for (int k = 0; k < n; k++) {
            if (ids[k] == edges[e].from) a = k;
            if (ids[k] == edges[e].to) b = k;
        }
        if (a >= 0 && b >= 0) reach[a * n + b] = 1;
    }
    for (int k = 0; k < n; k++)
        for (int i = 0; i < n; i++)
            if (reach[i * n + k])
                for (int j = 0; j < n; j++)
                    if (reach[k * n + j]) reach[i * n + j] = 1;
}

/* Whether launching graph g can neither hang nor touch memory it should not, and
 * whether its writes are ordered so that a checksum after it is determined. */
static void judge(int g, int *safe, int *race_free) {
    int ids[MAX_NODES];
    int n = graph_nodes(g, ids);
    unsigned char *reach = malloc((size_t)n * n + 1);
    reachability(g, ids, n, reach);
    *safe = !graphs[g].cyclic_child;
    *race_free = 1;
    for (int i = 0; i < n; i++) {
        if (reach[i * n + i]) *safe = 0;
        struct node *a = &nodes[ids[i]];
        if (a->kind == K_CHILD && !a->child_safe) *safe = 0;
        if (a->poisoned) *safe = 0;
        if (a->kind == K_FREE) {
            int ordered = 0;
            for (int j = 0; j < n; j++)
                if (nodes[ids[j]].kind == K_ALLOC && nodes[ids[j]].alloc == a->alloc && a->alloc >= 0 &&
                    reach[j * n + i])
                    ordered = 1;
            if (!ordered) *safe = 0;
        }
    }
    for (int i = 0; i < n && *race_free; i++)
        for (int j = i + 1; j < n && *race_free; j++) {
            if (reach[i * n + j] || reach[j * n + i]) continue;
            struct node *a = &nodes[ids[i]], *b = &nodes[ids[j]];
            int as[MAX_CHILD_SLOTS + 1], an = 0, bs[MAX_CHILD_SLOTS + 1], bn = 0;
            if (a->slot >= 0) as[an++] = a->slot;
            for (int k = 0; k < a->n_child_slots; k++) as[an++] = a->child_slots[k];
            if (b->slot >= 0) bs[bn++] = b->slot;
            for (int k = 0; k < b->n_child_slots; k++) bs[bn++] = b->child_slots[k];
            for (int x = 0; x < an; x++)
                for (int y = 0; y < bn; y++)
                    if (as[x] == bs[y]) *race_free = 0;
        }
    /* Captured nodes are unordered with named ones only through edges the program does
     * not know: a slot shared between them counts as a race. */
    for (int i = 0; i < n; i++) {
        struct node *a = &nodes[ids[i]];
        for (int k = 0; k < graphs[g].n_opaque; k++) {
            if (a->slot == graphs[g].opaque_slots[k]) *race_free = 0;
            for (int c = 0; c < a->n_child_slots; c++)
                if (a->child_slots[c] == graphs[g].opaque_slots[k]) *race_free = 0;
        }
    }
    free(reach);
}

/* The slots graph g writes, for a child node made of it. */
static int graph_slots(int g, int *out) {
    int ids[MAX_NODES], n = graph_nodes(g, ids), k = 0;
    for (int i = 0; i < n && k < MAX_CHILD_SLOTS; i++) {
        if (nodes[ids[i]].slot >= 0) out[k++] = nodes[ids[i]].slot;
        for (int c = 0; c < nodes[ids[i]].n_child_slots && k < MAX_CHILD_SLOTS; c++)
            out[k++] = nodes[ids[i]].child_slots[c];
    }
    for (int c = 0; c < graphs[g].n_opaque && k < MAX_CHILD_SLOTS; c++) out[k++] = graphs[g].opaque_slots[c];
    return k;
}

/* ---- dependencies, valid and not ---- */
struct deps {
    CUgraphNode h[8];
    int id[8];
    size_t n;
    int null_array;
};
static void pick_deps(int g, struct deps *d) {
    int ids[MAX_NODES];
    int n = graph_nodes(g, ids);
    d->n = 0;
    d->null_array = 0;
    int want = n ? rnd(4) : 0;
    if (want > n) want = n;
    for (int k = 0; k < want; k++) {
        int i = ids[rnd(n)];
        int dup = 0;
        for (size_t j = 0; j < d->n; j++)
            if (d->id[j] == i) dup = 1;
        if (dup) continue;
        d->id[d->n] = i;
        d->h[d->n++] = nodes[i].h;
    }
    int r = rnd(100);
    if (r < 4 && d->n > 0) { /* a duplicate */
        d->id[d->n] = d->id[0];
        d->h[d->n] = d->h[0];
        d->n++;
    } else if (r < 8) { /* a node of another graph */
        int other = -1;
        for (int t = 0; t < 8 && other < 0; t++) {
            int i = rnd(n_nodes);
            if (n_nodes && nodes[i].alive && nodes[i].graph != g) other = i;
        }
        if (other >= 0) {
            d->id[d->n] = other;
            d->h[d->n++] = nodes[other].h;
        }
    } else if (r < 10 && last_dead >= 0) { /* a destroyed node */
        d->id[d->n] = -2 - last_dead;
        d->h[d->n++] = nodes[last_dead].h;
    } else if (r < 13) { /* NULL with a count */
        d->null_array = 1;
        d->n = 1 + (size_t)rnd(2);
    }
}
/* Every dependency a live node of graph g (repeats allowed). */
static int deps_own(int g, struct deps *d) {
    if (d->null_array) return 0;
    for (size_t i = 0; i < d->n; i++)
        if (d->id[i] < 0 || nodes[d->id[i]].graph != g) return 0;
    return 1;
}
/* Dependencies the H200 refused (INVALID_VALUE) before a graph made its own child could
 * crash it: a NULL array with a count, or another graph's node. */
static int deps_refused(int g, struct deps *d) {
    if (d->null_array) return 1;
    for (size_t i = 0; i < d->n; i++)
        if (d->id[i] >= 0 && nodes[d->id[i]].graph != g) return 1;
    return 0;
}
static void put_deps(struct deps *d) {
    if (d->null_array) {
        put("NULL/%zu", d->n);
        return;
    }
    put("[");
    for (size_t i = 0; i < d->n; i++) {
        if (d->id[i] <= -2)
            put("%sdead:n%d", i ? "," : "", -2 - d->id[i] + 1);
        else
            put("%sn%d", i ? "," : "", d->id[i] + 1);
    }
    put("]");
}

/* ---- node parameters ---- */
static unsigned kernel_values[MAX_NODES];
static CUDA_KERNEL_NODE_PARAMS kernel_params(int slot, unsigned n, unsigned *value, CUdeviceptr *p,
                                             void **args, int broken) {
    CUDA_KERNEL_NODE_PARAMS kp;
    memset(&kp, 0, sizeof kp);
    *p = slot_ptr(slot);
    args[0] = p;
    args[1] = &kernel_values[MAX_NODES - 1];
    kernel_values[MAX_NODES - 1] = n;
    args[2] = value;
    kp.func = bump;
    kp.gridDimX = 1 + (unsigned)rnd(2);
    kp.gridDimY = kp.gridDimZ = 1;
    kp.blockDimX = 8 + 8 * (unsigned)rnd(2);
    kp.blockDimY = kp.blockDimZ = 1;
    kp.kernelParams = args;
    if (broken == 1) kp.func = NULL;
    if (broken == 2) kp.blockDimX = 2048;
    if (broken == 3) kp.sharedMemBytes = 1u << 30;
    return kp;
}
static CUDA_MEMSET_NODE_PARAMS memset_params(int slot, int broken, unsigned value) {
    CUDA_MEMSET_NODE_PARAMS mp;
    memset(&mp, 0, sizeof mp);
    mp.dst = slot_ptr(slot);
    mp.value = value;
    mp.elementSize = chance(50) ? 4 : 1;
    mp.width = mp.elementSize == 4 ? 1 + (unsigned)rnd(16) : 1 + (unsigned)rnd(64);
    mp.height = 1;
    mp.pitch = 0;
    if (broken == 1) mp.elementSize = 3;
    if (broken == 2) { /* runs past the end of the allocation */
        mp.dst = slot_ptr(SLOTS - 1);
        mp.elementSize = 4;
        mp.width = 64;
    }
    if (broken == 3) mp.dst = slot_ptr(slot) + 1; /* misaligned for 4-byte elements */
    if (broken == 3) mp.elementSize = 4;
    return mp;
}
static CUDA_MEMCPY3D memcpy_params(int slot, int broken) {
    CUDA_MEMCPY3D cp;
    memset(&cp, 0, sizeof cp);
    cp.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    cp.srcDevice = source_buf + (CUdeviceptr)rnd(SLOTS * SLOT_BYTES - SLOT_BYTES);
    cp.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    cp.dstDevice = slot_ptr(slot);
    cp.WidthInBytes = 1 + (size_t)rnd(SLOT_BYTES);
    cp.Height = 1;
    cp.Depth = 1;
    if (broken == 1) cp.WidthInBytes = 0;
    if (broken == 2) { /* the source runs past its allocation */
        cp.srcDevice = source_buf + SLOTS * SLOT_BYTES - 8;
        cp.WidthInBytes = SLOT_BYTES;
    }
    if (broken == 3) cp.Depth = 0;
    return cp;
}

/* ---- operations ---- */
static void op_create_graph(void) {
    if (n_graphs == MAX_GRAPHS) return;
    CUgraph h = NULL;
    unsigned flags = chance(5) ? 1 : 0;
    put("cuGraphCreate(flags=%u)", flags);
    if (result(cuGraphCreate(&h, flags)) == CUDA_SUCCESS) {
        memset(&graphs[n_graphs], 0, sizeof graphs[n_graphs]);
        graphs[n_graphs].h = h;
        graphs[n_graphs].alive = 1;
        n_graphs++;
        put(" g%d", n_graphs);
    }
    finish();
}

static void forget_graph(int g) {
    graphs[g].alive = 0;
    for (int i = 0; i < n_nodes; i++)
        if (nodes[i].graph == g) nodes[i].alive = 0;
    for (int e = 0; e < n_edges; e++)
        if (edges[e].graph == g) edges[e].alive = 0;
}

static void op_destroy_graph(void) {
    int g = live_graph();
    if (g < 0) return;
    put("cuGraphDestroy(g%d)", g + 1);
    if (result(cuGraphDestroy(graphs[g].h)) == CUDA_SUCCESS) forget_graph(g);
    finish();
}

static int new_node(CUgraphNode h, int g, enum kind kind, int slot) {
    if (n_nodes == MAX_NODES) return -1;
    struct node *n = &nodes[n_nodes];
    memset(n, 0, sizeof *n);
    n->h = h;
    n->graph = g;
    n->alive = 1;
    n->kind = kind;
    n->slot = slot;
    n->alloc = -1;
    return n_nodes++;
}

static void op_clone(void) {
    int g = live_graph();
    if (g < 0 || n_graphs == MAX_GRAPHS) return;
    CUgraph h = NULL;
    put("cuGraphClone(g%d)", g + 1);
    if (result(cuGraphClone(&h, graphs[g].h)) != CUDA_SUCCESS) {
        finish();
        return;
    }
    int c = n_graphs++;
    graphs[c] = graphs[g];
    graphs[c].h = h;
    graphs[c].memory_nodes = 0; /* a graph with memory nodes is not cloned */
    put(" g%d", c + 1);
    finish();
    int ids[MAX_NODES], map[MAX_NODES];
    int n = graph_nodes(g, ids);
    for (int k = 0; k < n; k++) {
        CUgraphNode found = NULL;
        map[k] = -1;
        put("cuGraphNodeFindInClone(n%d, g%d)", ids[k] + 1, c + 1);
        if (result(cuGraphNodeFindInClone(&found, nodes[ids[k]].h, h)) == CUDA_SUCCESS) {
            int i = new_node(found, c, nodes[ids[k]].kind, nodes[ids[k]].slot);
            if (i >= 0) {
                struct node keep = nodes[ids[k]];
                nodes[i] = keep;
                nodes[i].h = found;
                nodes[i].graph = c;
                map[k] = i;
                put(" n%d", i + 1);
            }
        }
        finish();
    }
    for (int k = 0; k < n; k++) {
        if (map[k] < 0 || nodes[map[k]].kind != K_ALLOC) continue;
        CUDA_MEM_ALLOC_NODE_PARAMS ap;
        memset(&ap, 0, sizeof ap);
        put("cuGraphMemAllocNodeGetParams(n%d)", map[k] + 1);
        if (result(cuGraphMemAllocNodeGetParams(nodes[map[k]].h, &ap)) == CUDA_SUCCESS) {
            int a = alloc_named(ap.dptr);
            put(" dptr=a%d bytes=%zu", a + 1, ap.bytesize);
            /* A clone's allocation may have an address of its own: its free nodes free
             * the clone's. */
            int old = nodes[map[k]].alloc;
            nodes[map[k]].alloc = a;
            for (int j = 0; j < n; j++)
                if (map[j] >= 0 && nodes[map[j]].kind == K_FREE && nodes[ids[j]].alloc == old)
                    nodes[map[j]].alloc = a;
        }
        finish();
    }
    int e_end = n_edges;
    for (int e = 0; e < e_end; e++) {
        if (!edges[e].alive || edges[e].graph != g) continue;
        int a = -1, b = -1;
        for (int k = 0; k < n; k++) {
            if (ids[k] == edges[e].from) a = map[k];
            if (ids[k] == edges[e].to) b = map[k];
        }
        if (a >= 0 && b >= 0) add_edge(a, b);
    }
}

static void op_add_node(void) {
    int g = live_graph();
    if (g < 0) return;
    int ids[MAX_NODES];
    if (graph_nodes(g, ids) >= MAX_GRAPH_NODES) return;
    struct deps d;
    pick_deps(g, &d);
    const CUgraphNode *dh = d.null_array ? NULL : d.h;
    CUgraphNode h = NULL;
    CUresult r;
    enum kind kind = (enum kind)rnd(10);
    int slot = -1, broken = chance(12) ? 1 + rnd(3) : 0;
    int child_slots[MAX_CHILD_SLOTS], n_child = 0, child_safe = 1, alloc = -1;
    if (kind == K_MEMSET || kind == K_MEMCPY || kind == K_KERNEL) {
        slot = fresh_slot();
        if (slot < 0) kind = K_EMPTY;
    }
    switch (kind) {
    case K_EMPTY:
        put("cuGraphAddEmptyNode(g%d, ", g + 1);
        put_deps(&d);
        put(")");
        r = result(cuGraphAddEmptyNode(&h, graphs[g].h, dh, d.n));
        break;
    case K_MEMSET: {
        unsigned value = (unsigned)rnd(256);
        CUDA_MEMSET_NODE_PARAMS mp = memset_params(slot, broken, value);
        put("cuGraphAddMemsetNode(g%d, ", g + 1);
        put_deps(&d);
        put(", slot%d, elem=%u, width=%zu, value=%u, broken=%d)", slot, mp.elementSize, mp.width, value, broken);
        r = result(cuGraphAddMemsetNode(&h, graphs[g].h, dh, d.n, &mp, ctx));
        break;
    }
    case K_MEMCPY: {
        CUDA_MEMCPY3D cp = memcpy_params(slot, broken);
        put("cuGraphAddMemcpyNode(g%d, ", g + 1);
        put_deps(&d);
        put(", slot%d, src+%llu, bytes=%zu, broken=%d)", slot, (unsigned long long)(cp.srcDevice - source_buf),
            cp.WidthInBytes, broken);
        r = result(cuGraphAddMemcpyNode(&h, graphs[g].h, dh, d.n, &cp, ctx));
        break;
    }
    case K_HOST: {
        CUDA_HOST_NODE_PARAMS hp = {host_bump, &increments[rnd(4)]};
        if (broken) hp.fn = NULL;
        put("cuGraphAddHostNode(g%d, ", g + 1);
        put_deps(&d);
        put(", inc=%u, fn=%s)", *(unsigned *)hp.userData, hp.fn ? "bump" : "NULL");
        r = result(cuGraphAddHostNode(&h, graphs[g].h, dh, d.n, &hp));
        break;
    }
    case K_KERNEL: {
        void *args[3];
        CUdeviceptr p;
        unsigned n = 1 + (unsigned)rnd(16);
        kernel_values[n_nodes] = 1 + (unsigned)rnd(9);
        CUDA_KERNEL_NODE_PARAMS kp = kernel_params(slot, n, &kernel_values[n_nodes], &p, args, broken);
        put("cuGraphAddKernelNode(g%d, ", g + 1);
        put_deps(&d);
        put(", slot%d, n=%u, v=%u, grid=%u, block=%u, broken=%d)", slot, n, kernel_values[n_nodes], kp.gridDimX,
            kp.blockDimX, broken);
        r = result(cuGraphAddKernelNode(&h, graphs[g].h, dh, d.n, &kp));
        break;
    }
    case K_REC:
        put("cuGraphAddEventRecordNode(g%d, ", g + 1);
        put_deps(&d);
        put(", %s)", broken ? "NULL" : "erec");
        r = result(cuGraphAddEventRecordNode(&h, graphs[g].h, dh, d.n, broken ? NULL : e_rec));
        break;
    case K_WAIT:
        put("cuGraphAddEventWaitNode(g%d, ", g + 1);
        put_deps(&d);
        put(", %s)", broken ? "NULL" : "ewait");
        r = result(cuGraphAddEventWaitNode(&h, graphs[g].h, dh, d.n, broken ? NULL : e_wait));
        break;
    case K_CHILD: {
        int c = chance(85) ? live_graph() : g;
        if (c < 0) c = g;
        int cs, crf;
        judge(c, &cs, &crf);
        child_safe = cs;
        n_child = graph_slots(c, child_slots);
        put("cuGraphAddChildGraphNode(g%d, ", g + 1);
        put_deps(&d);
        put(", g%d)", c + 1);
        if (c == g && !graphs[g].memory_nodes && !deps_refused(g, &d)) {
            put(" skipped (a graph its own child crashes driver 580)");
            r = CUDA_ERROR_NOT_SUPPORTED;
            break;
        }
        r = result(cuGraphAddChildGraphNode(&h, graphs[g].h, dh, d.n, graphs[c].h));
        break;
    }
    case K_ALLOC: {
        CUDA_MEM_ALLOC_NODE_PARAMS ap;
        memset(&ap, 0, sizeof ap);
        ap.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
        ap.poolProps.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
        ap.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        ap.poolProps.location.id = broken == 2 ? 7 : 0;
        ap.bytesize = broken == 1 ? 0 : (size_t)(1 + rnd(4)) << (10 + rnd(12));
        if (broken == 3) ap.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_INVALID;
        put("cuGraphAddMemAllocNode(g%d, ", g + 1);
        put_deps(&d);
        put(", bytes=%zu, device=%d, broken=%d)", ap.bytesize, ap.poolProps.location.id, broken);
        r = result(cuGraphAddMemAllocNode(&h, graphs[g].h, dh, d.n, &ap));
        if (r == CUDA_SUCCESS || (!broken && deps_own(g, &d))) graphs[g].memory_nodes = 1;
        if (r == CUDA_SUCCESS) {
            alloc = alloc_named(ap.dptr);
            put(" dptr=a%d", alloc + 1);
        }
        break;
    }
    case K_FREE:
    default: {
        /* Mostly an allocation of this graph; else one of another graph, memory the
         * program allocated with cuMemAlloc, or an address nobody allocated. */
        int cands[MAX_NODES], nc = 0;
        for (int i = 0; i < n_nodes; i++)
            if (nodes[i].alive && nodes[i].graph == g && nodes[i].kind == K_ALLOC) cands[nc++] = i;
        CUdeviceptr p;
        int r2 = rnd(100);
        if (nc && r2 < 75) {
            int an = cands[rnd(nc)];
            alloc = nodes[an].alloc;
            p = allocs[alloc].ptr;
            /* Mostly ordered after its allocation, as a launch needs. */
            int listed = 0;
            for (size_t k = 0; k < d.n; k++)
                if (d.id[k] == an) listed = 1;
            if (!listed && !d.null_array && d.n < 8 && chance(80)) {
                d.id[d.n] = an;
                d.h[d.n++] = nodes[an].h;
            }
            put("cuGraphAddMemFreeNode(g%d, ", g + 1);
            put_deps(&d);
            put(", a%d)", alloc + 1);
        } else if (n_allocs && r2 < 85) {
            int a = rnd(n_allocs);
            p = allocs[a].ptr;
            alloc = -1; /* never launched: freeing another graph's memory */
            put("cuGraphAddMemFreeNode(g%d, ", g + 1);
            put_deps(&d);
            put(", a%d of another graph)", a + 1);
        } else if (r2 < 93) {
            p = slots_buf;
            put("cuGraphAddMemFreeNode(g%d, ", g + 1);
            put_deps(&d);
            put(", cuMemAlloc'd)");
        } else {
            p = 0x1000;
            put("cuGraphAddMemFreeNode(g%d, ", g + 1);
            put_deps(&d);
            put(", 0x1000)");
        }
        kind = K_FREE;
        r = result(cuGraphAddMemFreeNode(&h, graphs[g].h, dh, d.n, p));
        if (r == CUDA_SUCCESS || deps_own(g, &d)) graphs[g].memory_nodes = 1;
        break;
    }
    }
    if (r == CUDA_SUCCESS) {
        int i = new_node(h, g, kind, slot);
        if (i >= 0) {
            nodes[i].alloc = alloc;
            nodes[i].child_safe = child_safe;
            nodes[i].poisoned = broken != 0;
            nodes[i].n_child_slots = n_child;
            memcpy(nodes[i].child_slots, child_slots, sizeof(int) * (size_t)n_child);
            put(" n%d", i + 1);
            if (!d.null_array)
                for (size_t k = 0; k < d.n; k++)
                    if (d.id[k] >= 0 && nodes[d.id[k]].graph == g) add_edge(d.id[k], i);
        }
    }
    finish();
}

static void edge_pairs(int g, int n, CUgraphNode *from, CUgraphNode *to, int *fi, int *ti) {
    for (int k = 0; k < n; k++) {
        int a = live_node(g), b = live_node(g);
        int r = rnd(100);
        if (r < 8 && k > 0) { /* a duplicate within the call */
            a = fi[0];
            b = ti[0];
        } else if (r < 14) { /* a self edge */
            b = a;
        } else if (r < 20) { /* a node of another graph */
            int o = rnd(n_nodes);
            if (nodes[o].alive) b = o;
        }
        fi[k] = a;
        ti[k] = b;
        from[k] = nodes[a].h;
        to[k] = nodes[b].h;
    }
}

static void op_dependencies(int add) {
    int g = live_graph();
    if (g < 0 || live_node(g) < 0) return;
    CUgraphNode from[3], to[3];
    int fi[3], ti[3];
    int n = 1 + rnd(3);
    if (!add && chance(60)) { /* mostly an existing edge */
        int ex[MAX_EDGES], ne = 0;
        for (int e = 0; e < n_edges; e++)
            if (edges[e].alive && edges[e].graph == g) ex[ne++] = e;
        if (ne) {
            n = 1;
            int e = ex[rnd(ne)];
            fi[0] = edges[e].from;
            ti[0] = edges[e].to;
            from[0] = nodes[fi[0]].h;
            to[0] = nodes[ti[0]].h;
        } else
            edge_pairs(g, n, from, to, fi, ti);
    } else
        edge_pairs(g, n, from, to, fi, ti);
    int null_from = chance(3);
    put("%s(g%d, [", add ? "cuGraphAddDependencies" : "cuGraphRemoveDependencies", g + 1);
    for (int k = 0; k < n; k++) put("%sn%d->n%d", k ? "," : "", fi[k] + 1, ti[k] + 1);
    put("]%s)", null_from ? ", from=NULL" : "");
    CUresult r;
    if (add)
        r = result(cuGraphAddDependencies(graphs[g].h, null_from ? NULL : from, to, NULL, (size_t)n));
    else
        r = result(cuGraphRemoveDependencies(graphs[g].h, null_from ? NULL : from, to, NULL, (size_t)n));
    if (r == CUDA_SUCCESS)
        for (int k = 0; k < n; k++) {
            if (nodes[fi[k]].graph != g || nodes[ti[k]].graph != g) continue;
            if (add)
                add_edge(fi[k], ti[k]);
            else
                for (int e = 0; e < n_edges; e++)
                    if (edges[e].alive && edges[e].from == fi[k] && edges[e].to == ti[k]) edges[e].alive = 0;
        }
    finish();
}

static void op_destroy_node(void) {
    int g = live_graph();
    if (g < 0) return;
    int i = live_node(g);
    if (i < 0) return;
    put("cuGraphDestroyNode(n%d)", i + 1);
    if (result(cuGraphDestroyNode(nodes[i].h)) == CUDA_SUCCESS) {
        nodes[i].alive = 0;
        last_dead = i;
        for (int e = 0; e < n_edges; e++)
            if (edges[e].alive && (edges[e].from == i || edges[e].to == i)) edges[e].alive = 0;
    }
    finish();
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }
static void put_sorted(char **names, size_t n) {
    qsort(names, n, sizeof *names, cmp_str);
    put(" [");
    for (size_t i = 0; i < n; i++) put("%s%s", i ? "," : "", names[i]);
    put("]");
}

static void op_query(void) {
    int g = live_graph();
    if (g < 0) return;
    int which = rnd(3);
    size_t count = 0;
    const char *fn = which == 0 ? "cuGraphGetNodes" : which == 1 ? "cuGraphGetRootNodes" : "cuGraphGetEdges";
    put("%s(g%d, NULL)", fn, g + 1);
    CUresult r = which == 0   ? cuGraphGetNodes(graphs[g].h, NULL, &count)
                 : which == 1 ? cuGraphGetRootNodes(graphs[g].h, NULL, &count)
                              : cuGraphGetEdges(graphs[g].h, NULL, NULL, NULL, &count);
    if (result(r) == CUDA_SUCCESS) put(" count=%zu", count);
    finish();
    if (r != CUDA_SUCCESS) return;
    /* The fill, with room for the count, or one short (the driver fills what fits). */
    size_t room = count > 0 && chance(15) ? count - 1 : count;
    CUgraphNode *a = calloc(room + 1, sizeof *a), *b = calloc(room + 1, sizeof *b);
    size_t got = room;
    put("%s(g%d, room=%zu)", fn, g + 1, room);
    r = which == 0   ? cuGraphGetNodes(graphs[g].h, a, &got)
        : which == 1 ? cuGraphGetRootNodes(graphs[g].h, a, &got)
                     : cuGraphGetEdges(graphs[g].h, a, b, NULL, &got);
    if (result(r) == CUDA_SUCCESS) {
        put(" count=%zu", got);
        size_t filled = got < room ? got : room;
        char **names = calloc(filled + 1, sizeof *names);
        for (size_t i = 0; i < filled; i++) {
            names[i] = malloc(48);
            if (which == 2)
                snprintf(names[i], 48, "%s->%s", node_name(a[i]), node_name(b[i]));
            else
                snprintf(names[i], 48, "%s", node_name(a[i]));
        }
        put_sorted(names, filled);
        for (size_t i = 0; i < filled; i++) free(names[i]);
        free(names);
    }
    finish();
    free(a);
    free(b);
}

static const char *type_name(CUgraphNodeType t) {
    switch (t) {
    case CU_GRAPH_NODE_TYPE_KERNEL: return "kernel";
    case CU_GRAPH_NODE_TYPE_MEMCPY: return "memcpy";
    case CU_GRAPH_NODE_TYPE_MEMSET: return "memset";
    case CU_GRAPH_NODE_TYPE_HOST: return "host";
    case CU_GRAPH_NODE_TYPE_GRAPH: return "graph";
    case CU_GRAPH_NODE_TYPE_EMPTY: return "empty";
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT: return "wait_event";
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD: return "event_record";
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC: return "mem_alloc";
    case CU_GRAPH_NODE_TYPE_MEM_FREE: return "mem_free";
    default: return "other";
    }
}

static void op_get_type(void) {
    int g = live_graph();
    if (g < 0) return;
    int i = live_node(g);
    if (i < 0) return;
    CUgraphNodeType t;
    put("cuGraphNodeGetType(n%d)", i + 1);
    if (result(cuGraphNodeGetType(nodes[i].h, &t)) == CUDA_SUCCESS) put(" %s", type_name(t));
    finish();
}

static void op_find_in_clone(void) {
    int g = live_graph(), c = live_graph();
    if (g < 0) return;
    int i = live_node(g);
    if (i < 0) return;
    CUgraphNode found = NULL;
    put("cuGraphNodeFindInClone(n%d, g%d)", i + 1, c + 1);
    if (result(cuGraphNodeFindInClone(&found, nodes[i].h, graphs[c].h)) == CUDA_SUCCESS)
        put(" %s", node_name(found));
    finish();
}

static int new_exec(CUgraphExec h, int g, unsigned long long flags) {
    if (n_execs == MAX_EXECS) return -1;
    struct exec *e = &execs[n_execs];
    memset(e, 0, sizeof *e);
    e->h = h;
    e->alive = 1;
    e->graph = g;
    e->flags = flags;
    judge(g, &e->safe, &e->race_free);
    int ids[MAX_NODES], n = graph_nodes(g, ids);
    for (int k = 0; k < n; k++) {
        if (nodes[ids[k]].kind != K_ALLOC || nodes[ids[k]].alloc < 0) continue;
        int freed = 0;
        for (int j = 0; j < n; j++)
            if (nodes[ids[j]].kind == K_FREE && nodes[ids[j]].alloc == nodes[ids[k]].alloc) freed = 1;
        if (!freed && e->n_allocs < MAX_ALLOCS) e->allocs[e->n_allocs++] = nodes[ids[k]].alloc;
    }
    return n_execs++;
}

static const unsigned long long instantiate_flags[] = {
    0,
    CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH,
    CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD,
    CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH,
    CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH,
    CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY,
    16,
};

static void op_instantiate(void) {
    int g = live_graph();
    if (g < 0) return;
    int nf = (int)(sizeof instantiate_flags / sizeof *instantiate_flags);
    unsigned long long flags = chance(50) ? 0 : instantiate_flags[rnd(nf)];
    CUgraphExec h = NULL;
    int safe, rf;
    judge(g, &safe, &rf);
    if (chance(25)) {
        CUDA_GRAPH_INSTANTIATE_PARAMS ip;
        memset(&ip, 0, sizeof ip);
        ip.flags = flags;
        ip.hUploadStream = chance(50) ? s1 : NULL;
        put("cuGraphInstantiateWithParams(g%d, flags=%llu, upload=%s)", g + 1, flags, stream_name(ip.hUploadStream));
        if (result(cuGraphInstantiateWithParams(&h, graphs[g].h, &ip)) == CUDA_SUCCESS) {
            int e = new_exec(h, g, flags);
            put(" e%d", e + 1);
        }
        put(" result_out=%d err_node=%s", (int)ip.result_out, node_name(ip.hErrNode_out));
        finish();
        if (ip.hUploadStream && (flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD)) {
            put("cuStreamSynchronize(s1)");
            result(cuStreamSynchronize(s1));
            finish();
        }
        return;
    }
    put("cuGraphInstantiateWithFlags(g%d, flags=%llu)", g + 1, flags);
    if (result(cuGraphInstantiateWithFlags(&h, graphs[g].h, flags)) == CUDA_SUCCESS) {
        int e = new_exec(h, g, flags);
        put(" e%d", e + 1);
        if (e >= 0) {
            put(" (model: %s)", execs[e].safe ? "launchable" : "not launched");
            cuuint64_t got = 0;
            finish();
            put("cuGraphExecGetFlags(e%d)", e + 1);
            if (result(cuGraphExecGetFlags(h, &got)) == CUDA_SUCCESS) put(" flags=%llu", (unsigned long long)got);
        }
    } else if (!safe)
        put(" (model: cycle or unordered free)");
    finish();
}

static const char *update_name(CUgraphExecUpdateResult r) {
    static const char *names[] = {"SUCCESS", "ERROR", "TOPOLOGY_CHANGED", "NODE_TYPE_CHANGED", "FUNCTION_CHANGED",
                                  "PARAMETERS_CHANGED", "NOT_SUPPORTED", "UNSUPPORTED_FUNCTION_CHANGE",
                                  "ATTRIBUTES_CHANGED"};
    return (unsigned)r < 9 ? names[r] : "?";
}

static void op_update(void) {
    int e = live_exec();
    if (e < 0) return;
    int g = graphs[execs[e].graph].alive && chance(75) ? execs[e].graph : live_graph();
    if (g < 0) return;
    CUgraphExecUpdateResultInfo info;
    memset(&info, 0, sizeof info);
    put("cuGraphExecUpdate(e%d, g%d)", e + 1, g + 1);
    CUresult r = result(cuGraphExecUpdate(execs[e].h, graphs[g].h, &info));
    put(" result=%s node=%s from=%s", update_name(info.result), node_name(info.errorNode),
        node_name(info.errorFromNode));
    if (r == CUDA_SUCCESS) {
        /* The executable now runs g's parameters over its own topology; the model takes
         * g's slots, conservatively keeping the exec's own judgement too. */
        int safe, rf;
        judge(g, &safe, &rf);
        execs[e].safe = execs[e].safe && safe;
        execs[e].race_free = execs[e].race_free && rf;
    }
    finish();
}

static CUstream pick_stream(void) {
    int r = rnd(10);
    return r < 6 ? s1 : r < 9 ? s2 : NULL;
}

static unsigned long long checksum(void) {
    static unsigned char host[SLOTS * SLOT_BYTES];
    if (cuMemcpyDtoH(host, slots_buf, sizeof host) != CUDA_SUCCESS) return 0;
    unsigned long long h = 1469598103934665603ULL;
    for (size_t i = 0; i < sizeof host; i++) h = (h ^ host[i]) * 1099511628211ULL;
    return h;
}

static void op_launch(void) {
    int e = live_exec();
    if (e < 0) return;
    CUstream s = pick_stream();
    if (chance(25)) {
        put("cuGraphUpload(e%d, %s)", e + 1, stream_name(s));
        result(cuGraphUpload(execs[e].h, s));
        finish();
    }
    if (!execs[e].safe) return;
    put("cuGraphLaunch(e%d, %s)", e + 1, stream_name(s));
    CUresult r = result(cuGraphLaunch(execs[e].h, s));
    finish();
    put("cuStreamSynchronize(%s)", stream_name(s));
    result(cuStreamSynchronize(s));
    finish();
    if (r == CUDA_SUCCESS)
        for (int k = 0; k < execs[e].n_allocs; k++) allocs[execs[e].allocs[k]].live = 1;
    if (execs[e].race_free)
        put("checksum=%016llx counter=%u", checksum(), __atomic_load_n(&counter, __ATOMIC_SEQ_CST));
    else
        put("checksum=skip(unordered writers) counter=%u", __atomic_load_n(&counter, __ATOMIC_SEQ_CST));
    finish();
}

static void op_enabled(void) {
    int e = live_exec();
    if (e < 0) return;
    int g = execs[e].graph;
    int i = graphs[g].alive && chance(85) ? live_node(g) : -1;
    if (i < 0) {
        int o = live_graph();
        if (o < 0 || (i = live_node(o)) < 0) return;
    }
    if (chance(50)) {
        unsigned on = (unsigned)rnd(2);
        put("cuGraphNodeSetEnabled(e%d, n%d, %u)", e + 1, i + 1, on);
        result(cuGraphNodeSetEnabled(execs[e].h, nodes[i].h, on));
    } else {
        unsigned on = 7;
        put("cuGraphNodeGetEnabled(e%d, n%d)", e + 1, i + 1);
        if (result(cuGraphNodeGetEnabled(execs[e].h, nodes[i].h, &on)) == CUDA_SUCCESS) put(" enabled=%u", on);
    }
    finish();
}

/* Parameters of a node, in an executable or in its graph (an edit cuGraphExecUpdate
 * then carries over). */
static void op_set_params(int in_exec) {
    int e = in_exec ? live_exec() : -1;
    int g = in_exec ? (e >= 0 ? execs[e].graph : -1) : live_graph();
    if (g < 0 || !graphs[g].alive) return;
    int i = live_node(g);
    if (i < 0) return;
    int broken = chance(15) ? 1 + rnd(3) : 0;
    struct node *n = &nodes[i];
    char who[32];
    if (in_exec)
        snprintf(who, sizeof who, "e%d, n%d", e + 1, i + 1);
    else
        snprintf(who, sizeof who, "n%d", i + 1);
    /* Mostly the node's own kind; sometimes another kind's setter, which must refuse. */
    enum kind as = chance(85) ? n->kind : (enum kind)rnd(5);
    int slot = n->slot >= 0 ? n->slot : 0;
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    switch (as) {
    case K_KERNEL: {
        void *args[3];
        CUdeviceptr p;
        unsigned cnt = 1 + (unsigned)rnd(16);
        kernel_values[i] = 1 + (unsigned)rnd(9);
        CUDA_KERNEL_NODE_PARAMS kp = kernel_params(slot, cnt, &kernel_values[i], &p, args, broken);
        put("%s(%s, n=%u, v=%u, broken=%d)", in_exec ? "cuGraphExecKernelNodeSetParams" : "cuGraphKernelNodeSetParams",
            who, cnt, kernel_values[i], broken);
        r = result(in_exec ? cuGraphExecKernelNodeSetParams(execs[e].h, n->h, &kp) : cuGraphKernelNodeSetParams(n->h, &kp));
        break;
    }
    case K_MEMSET: {
        unsigned value = (unsigned)rnd(256);
        CUDA_MEMSET_NODE_PARAMS mp = memset_params(slot, broken, value);
        put("%s(%s, elem=%u, width=%zu, value=%u, broken=%d)",
            in_exec ? "cuGraphExecMemsetNodeSetParams" : "cuGraphMemsetNodeSetParams", who, mp.elementSize, mp.width,
            value, broken);
        r = result(in_exec ? cuGraphExecMemsetNodeSetParams(execs[e].h, n->h, &mp, ctx) : cuGraphMemsetNodeSetParams(n->h, &mp));
        break;
    }
    case K_MEMCPY: {
        CUDA_MEMCPY3D cp = memcpy_params(slot, broken);
        put("%s(%s, src+%llu, bytes=%zu, broken=%d)",
            in_exec ? "cuGraphExecMemcpyNodeSetParams" : "cuGraphMemcpyNodeSetParams", who,
            (unsigned long long)(cp.srcDevice - source_buf), cp.WidthInBytes, broken);
        r = result(in_exec ? cuGraphExecMemcpyNodeSetParams(execs[e].h, n->h, &cp, ctx) : cuGraphMemcpyNodeSetParams(n->h, &cp));
        break;
    }
    case K_HOST: {
        CUDA_HOST_NODE_PARAMS hp = {host_bump, &increments[rnd(4)]};
        if (broken) hp.fn = NULL;
        put("%s(%s, inc=%u, fn=%s)", in_exec ? "cuGraphExecHostNodeSetParams" : "cuGraphHostNodeSetParams", who,
            *(unsigned *)hp.userData, hp.fn ? "bump" : "NULL");
        r = result(in_exec ? cuGraphExecHostNodeSetParams(execs[e].h, n->h, &hp) : cuGraphHostNodeSetParams(n->h, &hp));
        break;
    }
    default: {
        /* Other kinds: their getter for the graph's node, a kernel setter in an exec. */
        if (in_exec) {
            void *args[3];
            CUdeviceptr p;
            unsigned v = 1;
            CUDA_KERNEL_NODE_PARAMS kp = kernel_params(0, 1, &v, &p, args, 0);
            put("cuGraphExecKernelNodeSetParams(%s, on a %s node)", who, kind_name[n->kind]);
            r = result(cuGraphExecKernelNodeSetParams(execs[e].h, n->h, &kp));
            broken = 1; /* a kernel put in place of another kind: never launched */
        } else {
            CUDA_KERNEL_NODE_PARAMS kp;
            put("cuGraphKernelNodeGetParams(%s, a %s node)", who, kind_name[n->kind]);
            if (result(cuGraphKernelNodeGetParams(n->h, &kp)) == CUDA_SUCCESS)
                put(" grid=%u block=%u", kp.gridDimX, kp.blockDimX);
            r = CUDA_ERROR_INVALID_VALUE;
        }
        break;
    }
    }
    /* Accepted parameters meant to be refused, or a setter of another kind accepted:
     * what the node now does is not what the model knows. */
    if (r == CUDA_SUCCESS && (broken || as != n->kind)) {
        if (in_exec)
            execs[e].safe = 0;
        else
            n->poisoned = 1;
    }
    finish();
}

static void op_exec_destroy(void) {
    int e = live_exec();
    if (e < 0) return;
    put("cuGraphExecDestroy(e%d)", e + 1);
    if (result(cuGraphExecDestroy(execs[e].h)) == CUDA_SUCCESS) execs[e].alive = 0;
    finish();
}

/* ---- stream capture ---- */
static const char *status_name(CUstreamCaptureStatus s) {
    return s == CU_STREAM_CAPTURE_STATUS_NONE     ? "none"
           : s == CU_STREAM_CAPTURE_STATUS_ACTIVE ? "active"
           : s == CU_STREAM_CAPTURE_STATUS_INVALIDATED ? "invalidated"
                                                       : "?";
}
static const char *mode_name(CUstreamCaptureMode m) {
    return m == CU_STREAM_CAPTURE_MODE_GLOBAL         ? "global"
           : m == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL ? "thread_local"
           : m == CU_STREAM_CAPTURE_MODE_RELAXED      ? "relaxed"
                                                      : "invalid";
}

static void capture_info(CUstream s) {
    if (chance(50)) {
        CUstreamCaptureStatus st = (CUstreamCaptureStatus)9;
        put("cuStreamIsCapturing(%s)", stream_name(s));
        if (result(cuStreamIsCapturing(s, &st)) == CUDA_SUCCESS) put(" %s", status_name(st));
    } else {
        CUstreamCaptureStatus st = (CUstreamCaptureStatus)9;
        cuuint64_t id = 0;
        CUgraph graph = NULL;
        const CUgraphNode *deps = NULL;
        const CUgraphEdgeData *edge_data = NULL;
        size_t ndeps = 99;
        put("cuStreamGetCaptureInfo(%s)", stream_name(s));
        if (result(cuStreamGetCaptureInfo(s, &st, &id, &graph, &deps, &edge_data, &ndeps)) == CUDA_SUCCESS)
            put(" %s deps=%zu graph=%s", status_name(st), st == CU_STREAM_CAPTURE_STATUS_NONE ? (size_t)0 : ndeps,
                graph ? "set" : "null");
    }
    finish();
}

/* Work on a stream that writes a fresh slot (recorded for a captured graph's model). */
static int capture_work(CUstream s, int *slots_written, int *n_written) {
    int slot = fresh_slot();
    if (slot < 0) return 0;
    CUresult r;
    int what = rnd(4);
    if (what == 0) {
        unsigned v = (unsigned)rnd(256);
        put("cuMemsetD32Async(slot%d, %u, 16, %s)", slot, v, stream_name(s));
        r = result(cuMemsetD32Async(slot_ptr(slot), v, 16, s));
    } else if (what == 1) {
        CUdeviceptr p = slot_ptr(slot);
        unsigned n = 16, v = 1 + (unsigned)rnd(9);
        void *args[3] = {&p, &n, &v};
        put("cuLaunchKernel(bump, slot%d, v=%u, %s)", slot, v, stream_name(s));
        r = result(cuLaunchKernel(bump, 1, 1, 1, 16, 1, 1, 0, s, args, NULL));
    } else if (what == 2) {
        unsigned long long off = (unsigned long long)rnd(SLOTS * SLOT_BYTES - SLOT_BYTES);
        put("cuMemcpyDtoDAsync(slot%d, src+%llu, 64, %s)", slot, off, stream_name(s));
        r = result(cuMemcpyDtoDAsync(slot_ptr(slot), source_buf + off, SLOT_BYTES, s));
    } else {
        unsigned *inc = &increments[rnd(4)];
        put("cuLaunchHostFunc(bump, inc=%u, %s)", *inc, stream_name(s));
        r = result(cuLaunchHostFunc(s, host_bump, inc));
        slot = -1;
    }
    finish();
    if (r == CUDA_SUCCESS && slot >= 0 && *n_written < MAX_CHILD_SLOTS) slots_written[(*n_written)++] = slot;
    return r == CUDA_SUCCESS;
}

static void op_capture(void) {
    CUstreamCaptureMode mode = (CUstreamCaptureMode)rnd(3);
    if (chance(4)) mode = (CUstreamCaptureMode)3;
    CUstream origin = chance(92) ? s1 : NULL;
    put("cuStreamBeginCapture(%s, %s)", stream_name(origin), mode_name(mode));
    CUresult r = result(cuStreamBeginCapture(origin, mode));
    finish();
    if (r != CUDA_SUCCESS) return;
    int written[MAX_CHILD_SLOTS], n_written = 0;
    int forked = 0, joined = 0;
    int ops = 1 + rnd(8);
    for (int k = 0; k < ops; k++) {
        int what = rnd(100);
        if (what < 40) {
            capture_work(s1, written, &n_written);
        } else if (what < 48 && !forked) {
            put("cuEventRecord(efork, s1)");
            result(cuEventRecord(e_fork, s1));
            finish();
            put("cuStreamWaitEvent(s2, efork)");
            if (result(cuStreamWaitEvent(s2, e_fork, 0)) == CUDA_SUCCESS) forked = 1;
            finish();
        } else if (what < 58 && forked) {
            capture_work(s2, written, &n_written);
        } else if (what < 64 && forked && !joined) {
            put("cuEventRecord(ejoin, s2)");
            result(cuEventRecord(e_join, s2));
            finish();
            put("cuStreamWaitEvent(s1, ejoin)");
            if (result(cuStreamWaitEvent(s1, e_join, 0)) == CUDA_SUCCESS) joined = 1;
            finish();
        } else if (what < 70) {
            capture_info(chance(70) ? s1 : chance(50) ? s2 : NULL);
        } else if (what < 74) {
            put("cuStreamSynchronize(s1)");
            result(cuStreamSynchronize(s1));
            finish();
        } else if (what < 78) {
            CUdeviceptr p = 0;
            put("cuMemAlloc(4096)");
            if (result(cuMemAlloc(&p, 4096)) == CUDA_SUCCESS && n_captured_allocs < 64)
                captured_allocs[n_captured_allocs++] = p;
            finish();
        } else if (what < 82) {
            int fork_event = chance(50);
            put("cuEventQuery(%s)", fork_event ? "efork" : "ewait");
            result(cuEventQuery(fork_event ? e_fork : e_wait));
            finish();
        } else if (what < 86) {
            int slot = fresh_slot();
            if (slot >= 0) {
                put("cuMemsetD32Async(slot%d, 5, 16, legacy)", slot);
                result(cuMemsetD32Async(slot_ptr(slot), 5, 16, NULL));
                finish();
            }
        } else if (what < 90) {
            CUstreamCaptureMode m = (CUstreamCaptureMode)rnd(3);
            put("cuThreadExchangeStreamCaptureMode(%s)", mode_name(m));
            if (result(cuThreadExchangeStreamCaptureMode(&m)) == CUDA_SUCCESS) put(" previous=%s", mode_name(m));
            finish();
        } else if (what < 93) {
            put("cuStreamBeginCapture(s1, global)");
            result(cuStreamBeginCapture(s1, CU_STREAM_CAPTURE_MODE_GLOBAL));
            finish();
        } else if (what < 96 && forked) {
            CUgraph g = NULL;
            put("cuStreamEndCapture(s2)");
            result(cuStreamEndCapture(s2, &g));
            put(" graph=%s", g ? "set" : "null");
            finish();
        } else {
            capture_work(s1, written, &n_written);
        }
    }
    CUgraph g = NULL;
    put("cuStreamEndCapture(s1)");
    r = result(cuStreamEndCapture(s1, &g));
    put(" graph=%s", g ? "set" : "null");
    if (r == CUDA_SUCCESS && g && n_graphs < MAX_GRAPHS) {
        int i = n_graphs++;
        memset(&graphs[i], 0, sizeof graphs[i]);
        graphs[i].h = g;
        graphs[i].alive = 1;
        graphs[i].n_opaque = n_written;
        memcpy(graphs[i].opaque_slots, written, sizeof(int) * (size_t)n_written);
        put(" g%d", i + 1);
    } else if (g) {
        cuGraphDestroy(g);
    }
    finish();
    CUstreamCaptureStatus st;
    put("cuStreamIsCapturing(s2) after the end");
    if (result(cuStreamIsCapturing(s2, &st)) == CUDA_SUCCESS) {
        put(" %s", status_name(st));
        if (st != CU_STREAM_CAPTURE_STATUS_NONE) {
            finish();
            CUgraph g2 = NULL;
            put("cuStreamEndCapture(s2)");
            result(cuStreamEndCapture(s2, &g2));
            if (g2) cuGraphDestroy(g2);
        }
    }
    finish();
    put("cuCtxSynchronize()");
    result(cuCtxSynchronize());
    finish();
    put("checksum=%016llx counter=%u", checksum(), __atomic_load_n(&counter, __ATOMIC_SEQ_CST));
    finish();
}

/* ---- setup and teardown ---- */
static int setup(void) {
    CUdevice dev;
    put("cuInit(0)");
    if (result(cuInit(0)) != CUDA_SUCCESS) return finish(), -1;
    finish();
    put("cuDevicePrimaryCtxRetain(0)");
    if (result(cuDeviceGet(&dev, 0)) != CUDA_SUCCESS || cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS ||
        cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
        return finish(), -1;
    finish();
    put("cuModuleLoadData(bump)");
    if (result(cuModuleLoadData(&module, PTX)) != CUDA_SUCCESS || cuModuleGetFunction(&bump, module, "bump"))
        return finish(), -1;
    finish();
    put("setup: buffers, streams, events");
    static unsigned char pattern[SLOTS * SLOT_BYTES];
    for (size_t i = 0; i < sizeof pattern; i++) pattern[i] = (unsigned char)(i * 7 + 3);
    CUresult r = cuMemAlloc(&slots_buf, SLOTS * SLOT_BYTES);
    if (!r) r = cuMemAlloc(&source_buf, SLOTS * SLOT_BYTES);
    if (!r) r = cuMemsetD8(slots_buf, 0, SLOTS * SLOT_BYTES);
    if (!r) r = cuMemcpyHtoD(source_buf, pattern, sizeof pattern);
    if (!r) r = cuStreamCreate(&s1, chance(50) ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT);
    if (!r) r = cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING);
    if (!r) r = cuEventCreate(&e_rec, CU_EVENT_DISABLE_TIMING);
    if (!r) r = cuEventCreate(&e_wait, CU_EVENT_DISABLE_TIMING);
    if (!r) r = cuEventCreate(&e_fork, CU_EVENT_DISABLE_TIMING);
    if (!r) r = cuEventCreate(&e_join, CU_EVENT_DISABLE_TIMING);
    if (!r) r = cuEventRecord(e_wait, s2);
    if (!r) r = cuCtxSynchronize();
    if (result(r) != CUDA_SUCCESS) return finish(), -1;
    unsigned flags = 0;
    cuStreamGetFlags(s1, &flags);
    put(" s1=%s", flags & CU_STREAM_NON_BLOCKING ? "non-blocking" : "blocking");
    finish();
    return 0;
}

static void teardown(void) {
    put("teardown: free live graph allocations");
    int freed = 0, failed = 0;
    for (int a = 0; a < n_allocs; a++)
        if (allocs[a].live) {
            if (cuMemFreeAsync(allocs[a].ptr, s1) == CUDA_SUCCESS)
                freed++;
            else
                failed++;
        }
    cuStreamSynchronize(s1);
    put(" freed=%d failed=%d", freed, failed);
    finish();
    for (int e = 0; e < n_execs; e++)
        if (execs[e].alive) cuGraphExecDestroy(execs[e].h);
    for (int g = 0; g < n_graphs; g++)
        if (graphs[g].alive) cuGraphDestroy(graphs[g].h);
    for (int k = 0; k < n_captured_allocs; k++) cuMemFree(captured_allocs[k]);
    cuEventDestroy(e_rec);
    cuEventDestroy(e_wait);
    cuEventDestroy(e_fork);
    cuEventDestroy(e_join);
    cuStreamDestroy(s1);
    cuStreamDestroy(s2);
    cuMemFree(slots_buf);
    cuMemFree(source_buf);
    cuModuleUnload(module);
    put("teardown: cuCtxSynchronize");
    result(cuCtxSynchronize());
    finish();
    cuDevicePrimaryCtxRelease(0);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: random_graphs SEED STEPS\n");
        return 2;
    }
    rng_state = strtoull(argv[1], NULL, 10) * 0x2545F4914F6CDD1DULL + 1;
    int steps = atoi(argv[2]);
    if (setup() != 0) return 1;
    for (int step = 0; step < steps; step++) {
        int r = rnd(1000);
        if (r < 40) op_create_graph();
        else if (r < 50) op_destroy_graph();
        else if (r < 80) op_clone();
        else if (r < 400) op_add_node();
        else if (r < 460) op_dependencies(1);
        else if (r < 490) op_dependencies(0);
        else if (r < 515) op_destroy_node();
        else if (r < 580) op_query();
        else if (r < 600) op_get_type();
        else if (r < 615) op_find_in_clone();
        else if (r < 690) op_instantiate();
        else if (r < 730) op_update();
        else if (r < 810) op_launch();
        else if (r < 840) op_enabled();
        else if (r < 880) op_set_params(1);
        else if (r < 910) op_set_params(0);
        else if (r < 950) op_exec_destroy();
        else op_capture();
        if (n_graphs == 0 || live_graph() < 0) op_create_graph();
    }
    teardown();
    printf("calls=%d success=%d\n", calls, successes);
    return 0;
}
