// In the spirit of NVIDIA's graphConditionalNodes sample: conditional graph nodes whose
// condition a kernel sets with cudaGraphSetConditional. An IF node (and IF/ELSE) run on
// data that is and is not positive, a WHILE loop counting down with a default assigned at
// every launch, a SWITCH picking one of three bodies, and an IF nested in a WHILE.
#include "common.h"

// Sets the handle from *in: 1 when positive, else 0.
__global__ void set_if_positive(cudaGraphConditionalHandle h, const int *in) {
    cudaGraphSetConditional(h, *in > 0 ? 1 : 0);
}

// Adds `v` to *out.
__global__ void add_to(int *out, int v) { *out += v; }

// One round of a loop: counts *counter down, notes the round, and keeps the loop going
// while the counter is positive.
__global__ void count_down(cudaGraphConditionalHandle h, int *counter, int *rounds) {
    *counter -= 1;
    *rounds += 1;
    cudaGraphSetConditional(h, *counter > 0 ? 1 : 0);
}

// Sets the handle to *in.
__global__ void set_value(cudaGraphConditionalHandle h, const int *in) { cudaGraphSetConditional(h, (unsigned)*in); }

static cudaGraphNode_t kernel_node(cudaGraph_t g, const cudaGraphNode_t *deps, size_t n, void *f, void **args) {
    cudaKernelNodeParams kp;
    memset(&kp, 0, sizeof kp);
    kp.func = f;
    kp.gridDim = dim3(1);
    kp.blockDim = dim3(1);
    kp.kernelParams = args;
    cudaGraphNode_t node = NULL;
    T(cudaGraphAddKernelNode(&node, g, deps, n, &kp));
    return node;
}

// A conditional node after `dep` (or at the root); returns its bodies in `bodies`.
static cudaGraphNode_t conditional(cudaGraph_t g, cudaGraphNode_t dep, cudaGraphConditionalHandle h,
                                   cudaGraphConditionalNodeType type, unsigned size, cudaGraph_t *bodies) {
    // Aggregate initialisation, as NVIDIA's samples do: the rest is zero.
    cudaGraphNodeParams p = {cudaGraphNodeTypeConditional};
    p.conditional.handle = h;
    p.conditional.type = type;
    p.conditional.size = size;
    cudaGraphNode_t node = NULL;
    T(cudaGraphAddNode(&node, g, dep ? &dep : NULL, NULL, dep ? 1 : 0, &p));
    for (unsigned i = 0; i < size; i++) bodies[i] = p.conditional.phGraph_out ? p.conditional.phGraph_out[i] : NULL;
    return node;
}

static int *d_in, *d_out, *d_counter, *d_rounds;

static void set_int(int *d, int v) { T(cudaMemcpy(d, &v, sizeof v, cudaMemcpyHostToDevice)); }

static int get_int(const int *d) {
    int v = -1;
    T(cudaMemcpy(&v, d, sizeof v, cudaMemcpyDeviceToHost));
    return v;
}

static void run(cudaGraphExec_t e, cudaStream_t s) {
    T(cudaGraphLaunch(e, s));
    T(cudaStreamSynchronize(s));
}

int main(void) {
    T(cudaMalloc((void **)&d_in, sizeof(int)));
    T(cudaMalloc((void **)&d_out, sizeof(int)));
    T(cudaMalloc((void **)&d_counter, sizeof(int)));
    T(cudaMalloc((void **)&d_rounds, sizeof(int)));
    NEED(d_in);
    NEED(d_out);
    NEED(d_counter);
    NEED(d_rounds);
    cudaStream_t s;
    T(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    // ---- IF, then IF/ELSE -----------------------------------------------------------------
    for (unsigned size = 1; size <= 2; size++) {
        cudaGraph_t g = NULL;
        T(cudaGraphCreate(&g, 0));
        cudaGraphConditionalHandle h = 0;
        T(cudaGraphConditionalHandleCreate(&h, g, 0, 0));
        void *set_args[] = {&h, &d_in};
        cudaGraphNode_t set = kernel_node(g, NULL, 0, (void *)set_if_positive, set_args);
        cudaGraph_t bodies[2] = {NULL, NULL};
        cudaGraphNode_t c = conditional(g, set, h, cudaGraphCondTypeIf, size, bodies);
        OUT("IF with %u bodies: bodies made: %s", size, bodies[0] && (size == 1 || bodies[1]) ? "yes" : "no");
        cudaGraphNodeType t;
        T(cudaGraphNodeGetType(c, &t));
        OUT("node type %d", (int)t);
        int then_v = 1, else_v = 100;
        void *then_args[] = {&d_out, &then_v}, *else_args[] = {&d_out, &else_v};
        kernel_node(bodies[0], NULL, 0, (void *)add_to, then_args);
        if (size == 2) kernel_node(bodies[1], NULL, 0, (void *)add_to, else_args);
        cudaGraphExec_t e = NULL;
        T(cudaGraphInstantiate(&e, g, 0));
        set_int(d_out, 0);
        const int inputs[3] = {5, 0, -3};
        for (int k = 0; k < 3; k++) {
            set_int(d_in, inputs[k]);
            int before = get_int(d_out);
            run(e, s);
            int got = get_int(d_out) - before;
            int want = inputs[k] > 0 ? 1 : (size == 2 ? 100 : 0);
            OUT("IF/%u on %d: added %d (expected %d)", size, inputs[k], got, want);
            CHECK(got == want);
        }
        T(cudaGraphExecDestroy(e));
        T(cudaGraphDestroy(g));
    }

    // ---- WHILE: a count-down, its condition set to 1 at each launch -----------------------
    {
        cudaGraph_t g = NULL;
        T(cudaGraphCreate(&g, 0));
        cudaGraphConditionalHandle h = 0;
        T(cudaGraphConditionalHandleCreate(&h, g, 1, cudaGraphCondAssignDefault));
        cudaGraph_t body;
        conditional(g, NULL, h, cudaGraphCondTypeWhile, 1, &body);
        void *args[] = {&h, &d_counter, &d_rounds};
        kernel_node(body, NULL, 0, (void *)count_down, args);
        cudaGraphExec_t e = NULL;
        T(cudaGraphInstantiate(&e, g, 0));
        const int starts[2] = {5, 1};
        for (int k = 0; k < 2; k++) {
            set_int(d_counter, starts[k]);
            set_int(d_rounds, 0);
            run(e, s);
            int rounds = get_int(d_rounds), counter = get_int(d_counter);
            OUT("WHILE from %d: %d rounds, counter %d", starts[k], rounds, counter);
            CHECK(rounds == starts[k] && counter == 0);
        }
        T(cudaGraphExecDestroy(e));
        T(cudaGraphDestroy(g));
    }

    // ---- SWITCH over three bodies ---------------------------------------------------------
    {
        cudaGraph_t g = NULL;
        T(cudaGraphCreate(&g, 0));
        cudaGraphConditionalHandle h = 0;
        T(cudaGraphConditionalHandleCreate(&h, g, 0, 0));
        void *set_args[] = {&h, &d_in};
        cudaGraphNode_t set = kernel_node(g, NULL, 0, (void *)set_value, set_args);
        cudaGraph_t bodies[3];
        conditional(g, set, h, cudaGraphCondTypeSwitch, 3, bodies);
        int vals[3] = {1, 10, 100};
        void *args[3][2] = {{&d_out, &vals[0]}, {&d_out, &vals[1]}, {&d_out, &vals[2]}};
        for (int i = 0; i < 3; i++) kernel_node(bodies[i], NULL, 0, (void *)add_to, args[i]);
        cudaGraphExec_t e = NULL;
        T(cudaGraphInstantiate(&e, g, 0));
        for (int v = 0; v < 4; v++) {
            set_int(d_in, v);
            set_int(d_out, 0);
            run(e, s);
            int got = get_int(d_out), want = v < 3 ? vals[v] : 0;
            OUT("SWITCH on %d: added %d (expected %d)", v, got, want);
            CHECK(got == want);
        }
        T(cudaGraphExecDestroy(e));
        T(cudaGraphDestroy(g));
    }

    // ---- an IF nested in a WHILE: add 1 on rounds where the counter is still positive ------
    {
        cudaGraph_t g = NULL;
        T(cudaGraphCreate(&g, 0));
        cudaGraphConditionalHandle loop = 0, inner = 0;
        T(cudaGraphConditionalHandleCreate(&loop, g, 1, cudaGraphCondAssignDefault));
        cudaGraph_t body;
        conditional(g, NULL, loop, cudaGraphCondTypeWhile, 1, &body);
        T(cudaGraphConditionalHandleCreate(&inner, body, 0, 0));
        void *down_args[] = {&loop, &d_counter, &d_rounds};
        cudaGraphNode_t down = kernel_node(body, NULL, 0, (void *)count_down, down_args);
        void *set_args[] = {&inner, &d_counter};
        cudaGraphNode_t set = kernel_node(body, &down, 1, (void *)set_if_positive, set_args);
        cudaGraph_t then_body;
        conditional(body, set, inner, cudaGraphCondTypeIf, 1, &then_body);
        int one = 1;
        void *add_args[] = {&d_out, &one};
        kernel_node(then_body, NULL, 0, (void *)add_to, add_args);
        cudaGraphExec_t e = NULL;
        T(cudaGraphInstantiate(&e, g, 0));
        set_int(d_counter, 4);
        set_int(d_rounds, 0);
        set_int(d_out, 0);
        run(e, s);
        int rounds = get_int(d_rounds), added = get_int(d_out);
        OUT("WHILE from 4 with a nested IF: %d rounds, the IF ran %d times", rounds, added);
        CHECK(rounds == 4 && added == 3);
        T(cudaGraphExecDestroy(e));
        T(cudaGraphDestroy(g));
    }

    T(cudaStreamDestroy(s));
    T(cudaFree(d_in));
    T(cudaFree(d_out));
    T(cudaFree(d_counter));
    T(cudaFree(d_rounds));
    return finish();
}
