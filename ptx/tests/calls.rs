//! Calls as compilers write them: through function pointers (`.callprototype`),
//! recursive (directly and mutually, with a stack limit), and the device heap's `malloc`
//! and `free`; under both engines.

mod common;
use common::*;
use cumock_ptx::{run, DeviceHeap, Engine, FaultKind, KernelFault, Module, FUNC_WINDOW};

const CALLS: &str = r#"
typedef int (*binop)(int, int);
__device__ __noinline__ int add(int a, int b) { return a + b; }
__device__ __noinline__ int mul(int a, int b) { return a * b; }
__device__ __noinline__ int sub(int a, int b) { return a - b; }

// The table lives in memory the kernel fills, so the calls stay indirect.
extern "C" __global__ void indirect(int* out, binop* table, int k) {
  if (threadIdx.x == 0) { table[0] = add; table[1] = mul; table[2] = sub; }
  __syncthreads();
  binop f = table[threadIdx.x % 3];
  out[threadIdx.x] = f(threadIdx.x, k);
}

extern "C" __global__ void call_through(int* out, unsigned long long addr) {
  binop f = (binop)addr;
  out[threadIdx.x] = f(1, 2);
}

// `table` as `indirect` filled it.
extern "C" __global__ void load_code(int* out, binop* volatile* table) {
  out[0] = *(volatile int*)(void*)(*table)[0];
}

// Not associative, so the compiler keeps the recursion.
__device__ __noinline__ long long fib(int n) {
  if (n < 2) return n;
  long long a = fib(n - 1);
  long long b = fib(n - 2);
  return a + b;
}
extern "C" __global__ void fibs(long long* out) { out[threadIdx.x] = fib(threadIdx.x % 16); }

// Results written through pointers into the caller's frame, as numba's calling
// convention returns values: each activation's `.local` variables are its own.
__device__ __noinline__ void fib_out(int n, long long* out) {
  if (n < 2) { *out = n; return; }
  long long a, b;
  fib_out(n - 1, &a);
  fib_out(n - 2, &b);
  *out = a + b;
}
extern "C" __global__ void fibs_out(long long* out) {
  long long r;
  fib_out(threadIdx.x % 16, &r);
  out[threadIdx.x] = r;
}

__device__ __noinline__ unsigned depth(unsigned n) {
  if (n == 0) return 1;
  unsigned r = depth(n - 1);
  return (r ^ (r >> 3)) * 2654435761u + n;
}
extern "C" __global__ void deep(unsigned* out, unsigned n) { out[threadIdx.x] = depth(n); }

__device__ int is_odd(int n);
__device__ __noinline__ int is_even(int n) { return n == 0 ? 1 : is_odd(n - 1) * 3 % 7; }
__device__ __noinline__ int is_odd(int n) { return n == 0 ? 0 : is_even(n - 1) * 5 % 11; }
extern "C" __global__ void mutual(int* out) { out[threadIdx.x] = is_even(threadIdx.x); }

extern "C" __global__ void heap_use(unsigned long long* out, int n) {
  int* p = (int*)malloc(n * sizeof(int));
  if (!p) { out[threadIdx.x] = 0; return; }
  for (int i = 0; i < n; i++) p[i] = threadIdx.x + i;
  unsigned long long s = 0;
  for (int i = 0; i < n; i++) s += p[i];
  out[threadIdx.x] = ((unsigned long long)p % 16) ? 1 : s;
  free(p);
}

extern "C" __global__ void heap_keep(unsigned long long* out, unsigned long long n) {
  out[threadIdx.x] = (unsigned long long)malloc(n);
}

extern "C" __global__ void heap_free(unsigned long long* ptrs) { free((void*)ptrs[threadIdx.x]); }

extern "C" __global__ void heap_aligned(unsigned long long* out, unsigned long long align) {
  out[threadIdx.x] = (unsigned long long)__nv_aligned_device_malloc(24, align);
}
"#;

// A table initialised at load: the functions' addresses are in the module's variable.
const TABLE: &str = r#"
typedef int (*binop)(int, int);
__device__ __noinline__ int add(int a, int b) { return a + b; }
__device__ __noinline__ int mul(int a, int b) { return a * b; }
__device__ __noinline__ int sub(int a, int b) { return a - b; }
__device__ binop ctable[3] = {add, mul, sub};
extern "C" __global__ void from_table(int* out, int k) {
  out[threadIdx.x] = ctable[threadIdx.x % 3](threadIdx.x, k);
}
// Virtual functions: nvcc's virtual tables are such variables.
struct Shape { __device__ virtual int area() const { return 0; } };
struct Sq : Shape { int s; __device__ Sq(int s) : s(s) {} __device__ int area() const override { return s * s; } };
struct Tri : Shape { int b; __device__ Tri(int b) : b(b) {} __device__ int area() const override { return b * b / 2; } };
extern "C" __global__ void areas(int* out) {
  Sq q(threadIdx.x); Tri t(threadIdx.x);
  const Shape* s = (threadIdx.x & 1) ? (const Shape*)&q : (const Shape*)&t;
  out[threadIdx.x] = s->area();
}
"#;

fn module() -> Module {
    let text = ptx(CALLS);
    assert!(text.contains(".callprototype"), "the calls stayed indirect");
    Module::parse(&text).unwrap()
}

fn fib(n: i64) -> i64 {
    if n < 2 {
        n
    } else {
        fib(n - 1) + fib(n - 2)
    }
}

fn depth(n: u32) -> u32 {
    (0..=n).fold(0, |r, k| {
        if k == 0 {
            1
        } else {
            (r ^ (r >> 3)).wrapping_mul(2654435761).wrapping_add(k)
        }
    })
}

#[allow(clippy::too_many_arguments)]
fn go(
    m: &Module,
    kernel: &str,
    mem: &TestMemory,
    vals: &[u64],
    block: u32,
    engine: Engine,
    heap: Option<&DeviceHeap>,
    stack_bytes: Option<u64>,
) -> Result<(), KernelFault> {
    let k = m.kernel(kernel).unwrap();
    let p = params(&m.kernels[k], vals);
    let mut l = launch(1, block, &p);
    l.engine = engine;
    l.heap = heap;
    if let Some(s) = stack_bytes {
        l.stack_bytes = s;
        l.step_limit = None;
    }
    run(m, k, &l, mem).map(|_| ())
}

const ENGINES: [Engine; 2] = [Engine::Interp, Engine::Jit];

#[test]
fn calls_through_function_pointers_reach_each_lanes_function() {
    let m = module();
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let out = mem.map(&[0; 4 * 64], true);
        let table = mem.map(&[0; 8 * 3], true);
        go(
            &m,
            "indirect",
            &mem,
            &[out, table, 5],
            64,
            engine,
            None,
            None,
        )
        .unwrap();
        let want: Vec<u32> = (0..64i32)
            .map(|t| match t % 3 {
                0 => t + 5,
                1 => t * 5,
                _ => t - 5,
            } as u32)
            .collect();
        assert_eq!(to_u32s(&mem.read(out)), want, "{engine:?}");
        // The table holds three distinct addresses in the function window.
        let addrs: Vec<u64> = mem
            .read(table)
            .chunks(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert!(
            addrs.iter().all(|a| a >> 48 == FUNC_WINDOW >> 48),
            "{addrs:x?}"
        );
        assert!(addrs[0] != addrs[1] && addrs[1] != addrs[2]);
    }
}

#[test]
fn tables_of_function_pointers_and_virtual_tables_initialised_at_load_are_called_through() {
    let m = Module::parse(&ptx(TABLE)).unwrap();
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let out = mem.map(&[0; 4 * 64], true);
        // The module's variables as a driver places them, initialised.
        let globals: Vec<u64> = m.globals.iter().map(|g| mem.map(&g.init, true)).collect();
        let k = m.kernel("from_table").unwrap();
        let p = params(&m.kernels[k], &[out, 9]);
        let mut l = launch(1, 64, &p);
        l.engine = engine;
        l.globals = &globals;
        run(&m, k, &l, &mem).unwrap();
        let want: Vec<u32> = (0..64i32)
            .map(|t| match t % 3 {
                0 => t + 9,
                1 => t * 9,
                _ => t - 9,
            } as u32)
            .collect();
        assert_eq!(to_u32s(&mem.read(out)), want, "{engine:?}");

        let k = m.kernel("areas").unwrap();
        let p = params(&m.kernels[k], &[out]);
        let mut l = launch(1, 64, &p);
        l.engine = engine;
        l.globals = &globals;
        run(&m, k, &l, &mem).unwrap();
        let want: Vec<u32> = (0..64u32)
            .map(|t| if t & 1 == 1 { t * t } else { t * t / 2 })
            .collect();
        assert_eq!(to_u32s(&mem.read(out)), want, "virtual calls, {engine:?}");
    }
}

#[test]
fn a_call_through_a_non_function_address_faults_naming_it() {
    let m = module();
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let out = mem.map(&[0; 4 * 32], true);
        for bad in [0u64, out, FUNC_WINDOW + 8, FUNC_WINDOW + 4096 * 16] {
            let f = go(
                &m,
                "call_through",
                &mem,
                &[out, bad],
                32,
                engine,
                None,
                None,
            )
            .unwrap_err();
            assert_eq!(f.kind, FaultKind::IllegalInstruction, "{f}");
            assert_eq!(f.address, Some(bad));
            assert!(f.detail.contains("not the address of a function"), "{f}");
        }
    }
}

#[test]
fn loading_through_a_function_address_faults() {
    let m = module();
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let out = mem.map(&[0; 4 * 32], true);
        let table = mem.map(&[0; 8 * 3], true);
        go(
            &m,
            "indirect",
            &mem,
            &[out, table, 5],
            32,
            engine,
            None,
            None,
        )
        .unwrap();
        let at = mem.map(&table.to_le_bytes(), false);
        let f = go(&m, "load_code", &mem, &[out, at], 1, engine, None, None).unwrap_err();
        assert_eq!(f.kind, FaultKind::IllegalAddress, "{f}");
        assert!(f.detail.contains("function `_Z3addii`"), "{f}");
    }
}

#[test]
fn recursion_gives_each_activation_its_own_registers_and_parameters() {
    let m = module();
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let out = mem.map(&[0; 8 * 64], true);
        go(&m, "fibs", &mem, &[out], 64, engine, None, None).unwrap();
        let got: Vec<i64> = mem
            .read(out)
            .chunks(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        let want: Vec<i64> = (0..64).map(|t| fib(t % 16)).collect();
        assert_eq!(got, want, "{engine:?}");
        mem = TestMemory::new();
        let out = mem.map(&[0; 8 * 64], true);
        go(&m, "fibs_out", &mem, &[out], 64, engine, None, None).unwrap();
        let got: Vec<i64> = mem
            .read(out)
            .chunks(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(got, want, "through the callers' frames, {engine:?}");

        let out = mem.map(&[0; 4 * 32], true);
        go(&m, "mutual", &mem, &[out], 32, engine, None, None).unwrap();
        let even = |n: i32| -> i32 {
            // is_even / is_odd as the kernel computes them.
            let mut v = if n % 2 == 0 { 1 } else { 0 };
            for k in 1..=n {
                let caller_is_even = (n - k) % 2 == 0;
                v = if caller_is_even {
                    v * 3 % 7
                } else {
                    v * 5 % 11
                };
            }
            v
        };
        let want: Vec<u32> = (0..32).map(|t| even(t) as u32).collect();
        assert_eq!(to_u32s(&mem.read(out)), want, "{engine:?}");
    }
}

#[test]
fn recursion_deeper_than_the_stack_limit_faults_and_a_larger_limit_lets_it_run() {
    let m = module();
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let out = mem.map(&[0; 4 * 32], true);
        // 16 bytes an activation: 1024 bytes hold 64.
        go(&m, "deep", &mem, &[out, 50], 32, engine, None, None).unwrap();
        assert_eq!(to_u32s(&mem.read(out)), vec![depth(50); 32]);
        let f = go(&m, "deep", &mem, &[out, 10_000], 32, engine, None, None).unwrap_err();
        assert_eq!(f.kind, FaultKind::IllegalAddress, "{f}");
        assert!(f.detail.contains("call stack overflow"), "{f}");
        assert!(f.detail.contains("CU_LIMIT_STACK_SIZE"), "{f}");
        go(
            &m,
            "deep",
            &mem,
            &[out, 10_000],
            32,
            engine,
            None,
            Some(16 << 20),
        )
        .unwrap();
        assert_eq!(to_u32s(&mem.read(out)), vec![depth(10_000); 32]);
    }
}

#[test]
fn device_malloc_gives_aligned_distinct_blocks_and_null_when_exhausted() {
    let m = module();
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let heap_base = mem.map(&vec![0; 64 << 10], true);
        let heap = DeviceHeap::new(heap_base, 64 << 10);
        let out = mem.map(&[0; 8 * 128], true);
        go(
            &m,
            "heap_use",
            &mem,
            &[out, 40],
            128,
            engine,
            Some(&heap),
            None,
        )
        .unwrap();
        let sums: Vec<u64> = mem
            .read(out)
            .chunks(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        let want: Vec<u64> = (0..128u64).map(|t| (0..40).map(|i| t + i).sum()).collect();
        assert_eq!(sums, want, "{engine:?}");
        assert_eq!(heap.in_use(), 0, "every block was freed");

        // 32 threads of 4 KiB each in a 64 KiB heap: 16 get memory, 16 get NULL.
        let out = mem.map(&[0; 8 * 32], true);
        go(
            &m,
            "heap_keep",
            &mem,
            &[out, 4096],
            32,
            engine,
            Some(&heap),
            None,
        )
        .unwrap();
        let ptrs: Vec<u64> = mem
            .read(out)
            .chunks(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        let live: Vec<u64> = ptrs.iter().copied().filter(|&p| p != 0).collect();
        assert_eq!(live.len(), 16, "{ptrs:x?}");
        assert!(live
            .iter()
            .all(|p| p % 16 == 0 && (heap_base..heap_base + (64 << 10)).contains(p)));
        // Freed by another launch, as a GPU allows.
        go(&m, "heap_free", &mem, &[out], 32, engine, Some(&heap), None).unwrap();
        assert_eq!(heap.in_use(), 0);

        // __nv_aligned_device_malloc: at the alignment asked; NULL for one that is no
        // power of two.
        go(
            &m,
            "heap_aligned",
            &mem,
            &[out, 512],
            32,
            engine,
            Some(&heap),
            None,
        )
        .unwrap();
        let ptrs: Vec<u64> = mem
            .read(out)
            .chunks(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert!(ptrs.iter().all(|&p| p != 0 && p % 512 == 0), "{ptrs:x?}");
        go(&m, "heap_free", &mem, &[out], 32, engine, Some(&heap), None).unwrap();
        go(
            &m,
            "heap_aligned",
            &mem,
            &[out, 48],
            32,
            engine,
            Some(&heap),
            None,
        )
        .unwrap();
        assert!(mem.read(out).iter().all(|&b| b == 0));
        assert_eq!(heap.in_use(), 0);
    }
}

#[test]
fn freeing_what_malloc_did_not_give_faults_naming_the_pointer() {
    let m = module();
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let heap_base = mem.map(&vec![0; 4096], true);
        let heap = DeviceHeap::new(heap_base, 4096);
        let p = heap.malloc(64);
        let ptrs = mem.map(&u64s(&[p + 8]), true);
        let f = go(&m, "heap_free", &mem, &[ptrs], 1, engine, Some(&heap), None).unwrap_err();
        assert_eq!(f.kind, FaultKind::IllegalAddress, "{f}");
        assert_eq!(f.address, Some(p + 8));
        assert!(f.detail.contains("not the start of a block"), "{f}");
        heap.free(p).unwrap();
        // Without a heap, malloc faults rather than hand out memory nobody owns.
        let out = mem.map(&[0; 8], true);
        let f = go(&m, "heap_keep", &mem, &[out, 8], 1, engine, None, None).unwrap_err();
        assert!(f.detail.contains("no device heap"), "{f}");
    }
}

fn u64s(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn a_call_through_a_prototype_the_function_does_not_have_faults() {
    // Hand-written: `two` takes two parameters, the prototype says one.
    let text = r#"
.version 9.0
.target sm_90
.address_size 64
.func (.param .b32 r) two(.param .b32 a, .param .b32 b)
{
    .reg .b32 %r<3>;
    ld.param.b32 %r1, [a];
    ld.param.b32 %r2, [b];
    add.s32 %r1, %r1, %r2;
    st.param.b32 [r], %r1;
    ret;
}
.visible .entry k(.param .u64 out)
{
    .reg .b64 %rd<3>;
    .reg .b32 %r<2>;
    mov.u64 %rd1, two;
    {
    .param .b32 p0;
    st.param.b32 [p0], 5;
    .param .b32 ret0;
    proto : .callprototype (.param .b32 _) _ (.param .b32 _);
    call (ret0), %rd1, (p0), proto;
    ld.param.b32 %r1, [ret0];
    }
    ld.param.u64 %rd2, [out];
    st.global.u32 [%rd2], %r1;
    ret;
}
"#;
    let m = Module::parse(text).unwrap();
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let out = mem.map(&[0; 4], true);
        let f = go(&m, "k", &mem, &[out], 1, engine, None, None).unwrap_err();
        assert_eq!(f.kind, FaultKind::IllegalInstruction, "{f}");
        assert!(f.detail.contains("prototype of 1 parameters"), "{f}");
        assert!(f.detail.contains("`two` has 2"), "{f}");
    }
    // A prototype that does not match the call's own arguments is a load error.
    let bad = text.replace(
        "call (ret0), %rd1, (p0), proto;",
        "call (ret0), %rd1, (p0, p0), proto;",
    );
    let e = Module::parse(&bad).unwrap_err();
    assert!(
        e.message.contains("prototype `proto` has 1 parameters"),
        "{e}"
    );
}

/// numba-cuda's PTX for a call of a C-ABI `void` function (`cuda.declare_device(...,
/// abi="c")`), and NVCC's definition of it, each an input of the driver's linker.
const VOID_CALLER: &str = r#"
.version 9.0
.target sm_90
.address_size 64
.extern .func (.param .b64 func_retval0) consume(.param .b64 consume_param_0);
.visible .entry k(.param .u64 out)
{
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    {
    .param .b64 param0;
    st.param.b64 [param0+0], %rd2;
    .param .b64 retval0;
    call.uni (retval0), consume, (param0);
    ld.param.b64 %rd3, [retval0+0];
    }
    ret;
}
"#;
const VOID_CALLEE: &str = r#"
.version 9.0
.target sm_90
.address_size 64
.visible .func consume(.param .b64 consume_param_0)
{
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [consume_param_0];
    st.global.u32 [%rd1], 42;
    ret;
}
"#;

#[test]
fn a_void_function_called_through_another_inputs_prototype_with_a_return_value_runs() {
    // nvlink resolves the name and compares no prototypes (numba-cuda's
    // test_declare_device_cabi_void_return passes on the H200): the callee writes no
    // return value, which the caller reads and drops.
    let inputs = [
        ("caller.ptx".to_string(), VOID_CALLER.to_string()),
        ("callee.ptx".to_string(), VOID_CALLEE.to_string()),
    ];
    for order in [[0, 1], [1, 0]] {
        let linked = cumock_ptx::link::link(&order.map(|k| inputs[k].clone())).unwrap();
        let m = Module::parse(&linked).unwrap();
        for engine in ENGINES {
            let mut mem = TestMemory::new();
            let out = mem.map(&[0; 4], true);
            go(&m, "k", &mem, &[out], 1, engine, None, None).unwrap();
            assert_eq!(to_u32s(&mem.read(out)), [42], "{engine:?}");
        }
    }
    // Without a declaration that gives it a return value, a call that takes one from a
    // function defined without any stays a load error.
    let alone = VOID_CALLER
        .replace(
            ".extern .func (.param .b64 func_retval0) consume(.param .b64 consume_param_0);\n",
            "",
        )
        .replace(
            ".visible .entry",
            &format!(
                "{}\n.visible .entry",
                &VOID_CALLEE[VOID_CALLEE.find(".visible").unwrap()..]
            ),
        );
    let e = Module::parse(&alone).unwrap_err();
    assert!(
        e.message.contains("`consume` takes 0 values here, given 1"),
        "{e}"
    );
}
