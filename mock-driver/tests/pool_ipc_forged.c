/* Pool IPC against forgery (the mock's export data: magic, pid, chunk count, pool,
 * offset, length, the chunks' fd numbers in the exporter): another process that imported
 * the pool gets nothing for data altered to name another pool, more bytes than were
 * exported, or the fd of an allocation the exporter shared by cuIpcGetMemHandle (served
 * only for that handle's secret, not the pool's); the real data still maps. */
#define _GNU_SOURCE
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *rname(CUresult r) {
    const char *n = "?";
    cuGetErrorName(r, &n);
    return n;
}
#define CALL(what, call) (printf("%s = %s\n", what, rname(call)), fflush(stdout))

struct shared {
    CUmemPoolPtrExportData data;
    int ipc_fd;
};

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

static void try_import(CUmemoryPool pool, const CUmemPoolPtrExportData *d, const char *what) {
    CUmemPoolPtrExportData copy = *d;
    CUdeviceptr p = 0;
    CALL(what, cuMemPoolImportPointer(&p, pool, &copy));
    if (p) cuMemFree(p);
}

static int child(int sock) {
    alarm(30);
    CUcontext ctx;
    if (cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx)) return 3;
    struct shared sh;
    int fd = recv_fd(sock, &sh, sizeof sh);
    if (fd < 0) return 4;
    CUmemoryPool pool;
    CALL("import pool", cuMemPoolImportFromShareableHandle(&pool, (void *)(uintptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    CUmemPoolPtrExportData d = sh.data;
    d.reserved[16] ^= 1; /* the pool */
    try_import(pool, &d, "another pool");
    d = sh.data;
    d.reserved[36] ^= 1; /* the length, past the chunks served */
    try_import(pool, &d, "a longer range");
    d = sh.data;
    memcpy(&d.reserved[40], &sh.ipc_fd, 4); /* the legacy IPC export's fd */
    try_import(pool, &d, "the fd of a cuIpcGetMemHandle export");
    d = sh.data;
    memcpy(&d.reserved[40], &fd, 4); /* any other fd number */
    try_import(pool, &d, "another fd number");
    CUdeviceptr p = 0;
    CALL("the real data", cuMemPoolImportPointer(&p, pool, &sh.data));
    unsigned v = 0;
    if (p && cuMemcpyDtoH(&v, p, 4) == CUDA_SUCCESS) printf("child reads 0x%08x\n", v);
    if (p) CALL("free", cuMemFree(p));
    char done = 1;
    return write(sock, &done, 1) == 1 ? 0 : 5;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 3 && strcmp(argv[1], "child") == 0) return child(atoi(argv[2]));
    CUcontext ctx;
    if (cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx)) return 3;
    CUmemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    CUmemoryPool pool;
    CUstream s;
    CUdeviceptr p, m;
    if (cuMemPoolCreate(&pool, &props) || cuStreamCreate(&s, CU_STREAM_NON_BLOCKING)) return 4;
    if (cuMemAllocFromPoolAsync(&p, 4096, pool, s) || cuMemsetD32Async(p, 0x12345678u, 1024, s)) return 5;
    cuStreamSynchronize(s);
    if (cuMemAlloc(&m, 4096)) return 6;
    CUipcMemHandle h;
    CALL("ipc handle", cuIpcGetMemHandle(&h, m));
    struct shared sh;
    memset(&sh, 0, sizeof sh);
    memcpy(&sh.ipc_fd, &h.reserved[12], 4);
    int fd = -1;
    CALL("export pool", cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    CALL("export pointer", cuMemPoolExportPointer(&sh.data, p));
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) return 7;
    char arg[16];
    snprintf(arg, sizeof arg, "%d", sv[1]);
    pid_t pid = fork();
    if (pid == 0) {
        close(sv[0]);
        execl("/proc/self/exe", "pool_ipc_forged", "child", arg, (char *)NULL);
        _exit(127);
    }
    close(sv[1]);
    send_fd(sv[0], fd, &sh, sizeof sh);
    char done;
    if (read(sv[0], &done, 1) != 1) printf("the child said nothing\n");
    int st = 0;
    waitpid(pid, &st, 0);
    printf("child exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return 0;
}
