/* Forged cudaIpcMemHandle_t's of cumock's runtime (the handle it makes over a driver
 * without cuIpcGetMemHandle; the test makes the mock's first cuIpcGetMemHandle answer
 * CUDA_ERROR_NOT_SUPPORTED to get there). The exporter makes a real handle of cudaMalloc
 * memory (at an offset inside it) and exports VMM memory as an fd it gives to nobody; a
 * re-executed child opens every forgery, then the real handle while a stalled client holds
 * the exporter's fd service, and prints each answer. The exporter runs under a seccomp
 * filter that counts prctl(PR_SET_PTRACER) calls: it must let no one ptrace it. Layout (cudart/src/ipc.rs): magic
 * 0..8, pid 8..12, fd 12..16, size 16..24, offset 24..32, secret 32..48, inode 48..56,
 * zeros. */
#define _GNU_SOURCE
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define T(call)                                                                       \
    do {                                                                              \
        cudaError_t e_ = (call);                                                      \
        if (e_ != cudaSuccess) {                                                      \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,             \
                    cudaGetErrorName(e_));                                            \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

#define D(call)                                                                       \
    do {                                                                              \
        CUresult r_ = (call);                                                         \
        if (r_ != CUDA_SUCCESS) {                                                     \
            fprintf(stderr, "%s:%d: %s: %d\n", __FILE__, __LINE__, #call, (int)r_);   \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

#define OFFSET 4096

static volatile sig_atomic_t ptracer_calls;

static void on_sigsys(int sig, siginfo_t *info, void *ctx) {
    (void)sig; (void)info; (void)ctx;
    ptracer_calls++;
}

/* Traps prctl(PR_SET_PTRACER, ...) in this process (SIGSYS, counted); anything else runs. */
static void trap_set_ptracer(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigsys;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSYS, &sa, NULL);
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_prctl, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PR_SET_PTRACER, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {.len = sizeof f / sizeof f[0], .filter = f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
        perror("seccomp");
        exit(1);
    }
    /* The trap works: one call of our own is counted. */
    prctl(PR_SET_PTRACER, 0, 0, 0, 0);
    printf("the trap counts a PR_SET_PTRACER call: %s\n", ptracer_calls == 1 ? "yes" : "no");
    ptracer_calls = 0;
}

static void to_hex(const cudaIpcMemHandle_t *h, char *out) {
    for (int i = 0; i < 64; i++) sprintf(out + 2 * i, "%02x", (unsigned char)h->reserved[i]);
}

static cudaIpcMemHandle_t from_hex(const char *hex) {
    cudaIpcMemHandle_t h;
    for (int i = 0; i < 64; i++) sscanf(hex + 2 * i, "%2hhx", (unsigned char *)&h.reserved[i]);
    return h;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int child(int argc, char **argv) {
    T(cudaSetDevice(0));
    for (int i = 3; i + 1 < argc; i += 2) {
        void *p = NULL;
        cudaError_t e = cudaIpcOpenMemHandle(&p, from_hex(argv[i + 1]), cudaIpcMemLazyEnablePeerAccess);
        printf("open %s = %s\n", argv[i], cudaGetErrorName(e));
        if (e == cudaSuccess) cudaIpcCloseMemHandle(p);
        cudaGetLastError();
    }
    int stalled = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    int n = snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "cumock-cudart-ipc-%d", (int)getppid());
    int connected = connect(stalled, (struct sockaddr *)&a, offsetof(struct sockaddr_un, sun_path) + 1 + n);
    printf("stalled client connected: %s\n", connected == 0 ? "yes" : "no");
    double t0 = now();
    void *p = NULL;
    cudaError_t e = cudaIpcOpenMemHandle(&p, from_hex(argv[2]), cudaIpcMemLazyEnablePeerAccess);
    double took = now() - t0;
    printf("open real = %s\n", cudaGetErrorName(e));
    printf("real open took under 0.5 s: %s\n", took < 0.5 ? "yes" : "no");
    if (e != cudaSuccess) return 1;
    unsigned char byte = 0;
    T(cudaMemcpy(&byte, p, 1, cudaMemcpyDeviceToHost));
    printf("child reads %#x at the handle's offset\n", byte);
    T(cudaIpcCloseMemHandle(p));
    close(stalled);
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 3 && !strcmp(argv[1], "child")) return child(argc, argv);
    trap_set_ptracer();
    T(cudaSetDevice(0));
    char *d = NULL;
    T(cudaMalloc((void **)&d, 1 << 20));
    T(cudaMemset(d, 0x11, 1 << 20));
    T(cudaMemset(d + OFFSET, 0x77, 1));
    cudaIpcMemHandle_t h;
    T(cudaIpcGetMemHandle(&h, d + OFFSET));
    printf("the runtime's own handle: %s\n", memcmp(h.reserved, "cumockIP", 8) ? "no" : "yes");

    /* VMM memory exported as an fd that is given to nobody. */
    D(cuInit(0));
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    CUmemGenericAllocationHandle vmm;
    D(cuMemCreate(&vmm, 2 << 20, &prop, 0));
    int vfd = -1;
    D(cuMemExportToShareableHandle(&vfd, vmm, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    struct stat vst;
    fstat(vfd, &vst);
    int32_t v_fd = vfd;
    uint64_t v_inode = vst.st_ino, v_size = (uint64_t)vst.st_size, zero64 = 0;

    enum { N = 12 };
    const char *names[N];
    cudaIpcMemHandle_t forged[N];
    int k = 0;
#define FORGE(label, edit)                                  \
    do {                                                    \
        cudaIpcMemHandle_t f_ = h;                          \
        unsigned char *b = (unsigned char *)f_.reserved;    \
        uint64_t u_;                                        \
        (void)u_;                                           \
        edit;                                               \
        names[k] = label;                                   \
        forged[k++] = f_;                                   \
    } while (0)
    FORGE("pid altered", { int32_t pid = getpid() + 1; memcpy(b + 8, &pid, 4); });
    FORGE("fd altered", { b[12] ^= 1; });
    FORGE("size altered", { memcpy(&u_, b + 16, 8); u_ *= 2; memcpy(b + 16, &u_, 8); });
    FORGE("size zero", { memcpy(b + 16, &zero64, 8); });
    FORGE("offset 2^63", { u_ = 1ull << 63; memcpy(b + 24, &u_, 8); });
    FORGE("offset at the end", { memcpy(b + 24, b + 16, 8); });
    FORGE("secret altered (one bit)", { b[40] ^= 0x10; });
    FORGE("secret zero", { memset(b + 32, 0, 16); });
    FORGE("inode altered", { b[48] ^= 1; });
    FORGE("trailing bytes altered", { b[63] = 1; });
    FORGE("vmm fd with the real secret", {
        memcpy(b + 12, &v_fd, 4); memcpy(b + 16, &v_size, 8); memcpy(b + 24, &zero64, 8);
        memcpy(b + 48, &v_inode, 8);
    });
    FORGE("vmm fd with a zero secret", {
        memcpy(b + 12, &v_fd, 4); memcpy(b + 16, &v_size, 8); memcpy(b + 24, &zero64, 8);
        memcpy(b + 48, &v_inode, 8); memset(b + 32, 0, 16);
    });

    static char hex[N + 1][129];
    char *args[3 + 2 * N + 1];
    int a = 0;
    args[a++] = "/proc/self/exe";
    args[a++] = "child";
    to_hex(&h, hex[N]);
    args[a++] = hex[N];
    for (int i = 0; i < k; i++) {
        to_hex(&forged[i], hex[i]);
        args[a++] = (char *)names[i];
        args[a++] = hex[i];
    }
    args[a] = NULL;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        execv("/proc/self/exe", args);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    printf("child exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    printf("PR_SET_PTRACER calls in the exporter: %d\n", (int)ptracer_calls);
    close(vfd);
    D(cuMemRelease(vmm));
    T(cudaFree(d));
    return 0;
}
