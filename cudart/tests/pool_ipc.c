/* cumock's runtime passes a pool shared with another process on to the driver
 * (cudaMemPoolExportToShareableHandle, cudaMemPoolImportFromShareableHandle,
 * cudaMemPoolExportPointer, cudaMemPoolImportPointer), as NVIDIA's
 * streamOrderedAllocationIPC sample uses them: the parent exports a pool and an
 * allocation, re-execs itself as the importer and hands it the pool's fd over a Unix
 * socket (SCM_RIGHTS); the child reads the parent's bytes and writes its own. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define SAY(...) (printf(__VA_ARGS__), printf("\n"), fflush(stdout))
#define CALL(what, call) SAY("%s = %s", what, cudaGetErrorName(call))

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

static int child(int sock) {
    alarm(30);
    struct cudaMemPoolPtrExportData data;
    int fd = recv_fd(sock, &data, sizeof data);
    if (fd < 0) { SAY("child: no fd"); return 2; }
    cudaMemPool_t pool = NULL;
    CALL("child: import pool", cudaMemPoolImportFromShareableHandle(&pool, (void *)(uintptr_t)fd, cudaMemHandleTypePosixFileDescriptor, 0));
    struct cudaMemAccessDesc d;
    memset(&d, 0, sizeof d);
    d.location.type = cudaMemLocationTypeDevice;
    d.location.id = 0;
    d.flags = cudaMemAccessFlagsProtReadWrite;
    CALL("child: set access", cudaMemPoolSetAccess(pool, &d, 1));
    void *p = NULL;
    CALL("child: import pointer", cudaMemPoolImportPointer(&p, pool, &data));
    unsigned v = 0;
    if (cudaMemcpy(&v, p, 4, cudaMemcpyDeviceToHost) == cudaSuccess) SAY("child reads 0x%08x", v);
    v = 0xc0de0001u;
    CALL("child: write", cudaMemcpy((char *)p + 4, &v, 4, cudaMemcpyHostToDevice));
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    CALL("child: free", cudaFreeAsync(p, s));
    CALL("child: synchronize", cudaStreamSynchronize(s));
    char done = 1;
    return write(sock, &done, 1) == 1 ? 0 : 3;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 3 && strcmp(argv[1], "child") == 0) return child(atoi(argv[2]));
    struct cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypePosixFileDescriptor;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    cudaMemPool_t pool;
    CALL("create pool", cudaMemPoolCreate(&pool, &props));
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    void *p = NULL;
    CALL("allocate", cudaMallocFromPoolAsync(&p, 4096, pool, s));
    cudaMemsetAsync(p, 0x5a, 4096, s);
    cudaStreamSynchronize(s);
    int fd = -1;
    CALL("export pool", cudaMemPoolExportToShareableHandle(&fd, pool, cudaMemHandleTypePosixFileDescriptor, 0));
    struct cudaMemPoolPtrExportData data;
    CALL("export pointer", cudaMemPoolExportPointer(&data, p));
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return 2;
    char arg[16];
    snprintf(arg, sizeof arg, "%d", sv[1]);
    pid_t pid = fork();
    if (pid == 0) {
        close(sv[0]);
        execl("/proc/self/exe", "pool_ipc", "child", arg, (char *)NULL);
        _exit(127);
    }
    close(sv[1]);
    if (send_fd(sv[0], fd, &data, sizeof data) != 0) SAY("sending failed");
    char done = 0;
    if (read(sv[0], &done, 1) != 1) SAY("the child said nothing");
    int st = 0;
    waitpid(pid, &st, 0);
    SAY("child exit %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    unsigned v[2] = {0, 0};
    if (cudaMemcpy(v, p, 8, cudaMemcpyDeviceToHost) == cudaSuccess) SAY("parent reads 0x%08x 0x%08x", v[0], v[1]);
    CALL("free", cudaFreeAsync(p, s));
    CALL("synchronize", cudaStreamSynchronize(s));
    CALL("destroy pool", cudaMemPoolDestroy(pool));
    return 0;
}
