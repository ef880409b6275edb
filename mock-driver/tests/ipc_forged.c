/* Forged legacy IPC handles, as an attacker of the same user would make them from what
 * /proc shows (the exporter's pid, its fd numbers, their inodes and sizes): the exporter
 * makes a real handle of cuMemAlloc memory and exports VMM memory as an fd it gives to
 * nobody; a re-executed child (another process) opens the real handle and every forgery,
 * and prints each answer. Layout of the mock's handle (mock-driver/src/model/ipc.rs):
 * magic 0..8, pid 8..12, fd 12..16, inode 16..24, size 24..32, secret 32..48, zeros.
 *
 * The exporter runs under a seccomp filter that traps prctl(PR_SET_PTRACER): a driver
 * letting other processes ptrace it (and take its fds without any handle) shows as a
 * counted call. The child also tries pidfd_getfd on the exporter's fd itself, and opens
 * the real handle while a stalled client (connected, silent) holds the fd service. */
#define _GNU_SOURCE
#include <cuda.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHECK(call)                                                            \
    do {                                                                       \
        CUresult r_ = (call);                                                  \
        if (r_ != CUDA_SUCCESS) {                                              \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, \
                    (int)r_);                                                  \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

static const char *name_of(CUresult r) {
    const char *n = "?";
    cuGetErrorName(r, &n);
    return n;
}

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

static void to_hex(const CUipcMemHandle *h, char *out) {
    for (int i = 0; i < 64; i++) sprintf(out + 2 * i, "%02x", (unsigned char)h->reserved[i]);
}

static CUipcMemHandle from_hex(const char *hex) {
    CUipcMemHandle h;
    for (int i = 0; i < 64; i++) sscanf(hex + 2 * i, "%2hhx", (unsigned char *)&h.reserved[i]);
    return h;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int child(int argc, char **argv) {
    CUdevice dev;
    CUcontext ctx;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    pid_t exporter = getppid();
    CUipcMemHandle real = from_hex(argv[2]);
    int32_t fd;
    memcpy(&fd, real.reserved + 12, 4);

    /* Without a handle: take the exporter's fd with pidfd_getfd. */
    int pidfd = (int)syscall(SYS_pidfd_open, exporter, 0);
    int taken = pidfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
    printf("pidfd_getfd of the exporter's fd: %s\n", taken >= 0 ? "taken" : "refused");

    /* Every forgery. */
    for (int i = 3; i + 1 < argc; i += 2) {
        CUipcMemHandle h = from_hex(argv[i + 1]);
        CUdeviceptr p = 0;
        CUresult r = cuIpcOpenMemHandle(&p, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
        printf("open %s = %s\n", argv[i], name_of(r));
        if (r == CUDA_SUCCESS) cuIpcCloseMemHandle(p);
    }

    /* A client that connects to the exporter's fd service and never sends. */
    int stalled = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    int n = snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "cumock-driver-ipc-%d", (int)exporter);
    int connected = connect(stalled, (struct sockaddr *)&a, offsetof(struct sockaddr_un, sun_path) + 1 + n);
    printf("stalled client connected: %s\n", connected == 0 ? "yes" : "no");

    double t0 = now();
    CUdeviceptr p = 0;
    CUresult r = cuIpcOpenMemHandle(&p, real, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
    double took = now() - t0;
    printf("open real = %s\n", name_of(r));
    printf("real open took under 0.5 s: %s\n", took < 0.5 ? "yes" : "no");
    if (r != CUDA_SUCCESS) return 1;
    unsigned word = 0;
    CHECK(cuMemcpyDtoH(&word, p, 4));
    printf("child reads %#x\n", word);
    CHECK(cuIpcCloseMemHandle(p));
    close(stalled);
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 3 && !strcmp(argv[1], "child")) return child(argc, argv);
    trap_set_ptracer();
    CUdevice dev;
    CUcontext ctx;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));

    CUdeviceptr d;
    CHECK(cuMemAlloc(&d, 2 << 20));
    CHECK(cuMemsetD32(d, 0xfeed0001, (2 << 20) / 4));
    CUipcMemHandle h;
    CHECK(cuIpcGetMemHandle(&h, d));

    /* VMM memory exported as an fd that is given to nobody. */
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    CUmemGenericAllocationHandle vmm;
    CHECK(cuMemCreate(&vmm, 2 << 20, &prop, 0));
    int vfd = -1;
    CHECK(cuMemExportToShareableHandle(&vfd, vmm, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    struct stat vst;
    fstat(vfd, &vst);
    int32_t v_fd = vfd;
    uint64_t v_inode = vst.st_ino, v_size = (uint64_t)vst.st_size;

    enum { N = 10 };
    const char *names[N];
    CUipcMemHandle forged[N];
    int k = 0;
#define FORGE(label, edit)                      \
    do {                                        \
        CUipcMemHandle f_ = h;                  \
        unsigned char *b = (unsigned char *)f_.reserved; \
        (void)b;                                \
        edit;                                   \
        names[k] = label;                       \
        forged[k++] = f_;                       \
    } while (0)
    FORGE("pid altered", { int32_t pid = getpid() + 1; memcpy(b + 8, &pid, 4); });
    FORGE("fd altered", { b[12] ^= 1; });
    FORGE("inode altered", { b[16] ^= 1; });
    FORGE("size altered", { uint64_t s; memcpy(&s, b + 24, 8); s *= 2; memcpy(b + 24, &s, 8); });
    FORGE("secret altered (one bit)", { b[40] ^= 0x10; });
    FORGE("secret zero", { memset(b + 32, 0, 16); });
    FORGE("trailing bytes altered", { b[63] = 1; });
    /* The VMM fd, with the real handle's secret, then with none. */
    FORGE("vmm fd with the real secret", {
        memcpy(b + 12, &v_fd, 4); memcpy(b + 16, &v_inode, 8); memcpy(b + 24, &v_size, 8);
    });
    FORGE("vmm fd with a zero secret", {
        memcpy(b + 12, &v_fd, 4); memcpy(b + 16, &v_inode, 8); memcpy(b + 24, &v_size, 8);
        memset(b + 32, 0, 16);
    });
    FORGE("stdin with the real secret", { int32_t zero = 0; memcpy(b + 12, &zero, 4); });

    /* argv: child REAL (LABEL HEX)... */
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
    CHECK(cuMemFree(d));
    close(vfd);
    CHECK(cuMemRelease(vmm));
    return 0;
}
