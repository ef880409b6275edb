/* Shared by the client programs: error checks that print the call and the driver's name
 * for the error, and helpers for properties and access descriptors. */
#pragma once
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK(call)                                                                     \
    do {                                                                                \
        CUresult r_ = (call);                                                           \
        if (r_ != CUDA_SUCCESS) {                                                       \
            const char *n_ = "?";                                                       \
            cuGetErrorName(r_, &n_);                                                    \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, n_); \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

#define EXPECT(cond)                                                             \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

static inline CUmemAllocationProp prop_on(int device, int exportable) {
    CUmemAllocationProp p;
    memset(&p, 0, sizeof p);
    p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = device;
    p.requestedHandleTypes = exportable ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : CU_MEM_HANDLE_TYPE_NONE;
    return p;
}

static inline CUmemAccessDesc rw_for(int device) {
    CUmemAccessDesc d;
    memset(&d, 0, sizeof d);
    d.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    d.location.id = device;
    d.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    return d;
}

/* Sends fds over a Unix socket (SCM_RIGHTS), with one byte of data. */
static inline void send_fds(int sock, const int *fds, int n) {
    char byte = 'f';
    struct iovec iov = {&byte, 1};
    char buf[CMSG_SPACE(sizeof(int) * 16)];
    memset(buf, 0, sizeof buf);
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = buf;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * n);
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * n);
    memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
    EXPECT(n <= 16 && sendmsg(sock, &msg, 0) == 1);
}

/* Receives up to 16 fds sent by send_fds; returns how many came. */
static inline int recv_fds(int sock, int *fds) {
    char byte;
    struct iovec iov = {&byte, 1};
    char buf[CMSG_SPACE(sizeof(int) * 16)];
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = buf;
    msg.msg_controllen = sizeof buf;
    EXPECT(recvmsg(sock, &msg, 0) == 1);
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    EXPECT(c && c->cmsg_type == SCM_RIGHTS);
    int n = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
    memcpy(fds, CMSG_DATA(c), sizeof(int) * n);
    return n;
}

/* A child's side of the sharing programs: receives `n` allocations' fds on `sock`, maps
 * them side by side in a fresh reservation, read-write for device 0, and closes the fds.
 * Returns the reservation's start; `*g` is the granularity (each allocation's size). */
static inline CUdeviceptr map_received(int sock, int n, size_t *g) {
    int fds[16];
    EXPECT(recv_fds(sock, fds) == n);
    CUmemAllocationProp p = prop_on(0, 1);
    CHECK(cuMemGetAllocationGranularity(g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    CUdeviceptr va;
    CHECK(cuMemAddressReserve(&va, n * *g, 0, 0, 0));
    for (int i = 0; i < n; i++) {
        CUmemGenericAllocationHandle h;
        CHECK(cuMemImportFromShareableHandle(&h, (void *)(long)fds[i], CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
        close(fds[i]);
        CHECK(cuMemMap(va + i * *g, *g, 0, h, 0));
        CHECK(cuMemRelease(h));
    }
    CUmemAccessDesc d = rw_for(0);
    CHECK(cuMemSetAccess(va, n * *g, &d, 1));
    return va;
}

/* The parent's side: starts `children` copies of this program (fork, then exec of
 * /proc/self/exe, as the driver forbids CUDA in a forked child), each with the arguments
 * `args` (NULL-terminated, at most 4) followed by its socket's fd and its index, and sends
 * each the `n` fds. `socks[c]` is the parent's end of child c's socket. */
static inline void spawn_children(int children, const char *const *args, const int *fds, int n, pid_t *pids, int *socks) {
    for (int c = 0; c < children; c++) {
        int sv[2];
        EXPECT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
        pids[c] = fork();
        EXPECT(pids[c] >= 0);
        if (pids[c] == 0) {
            close(sv[0]);
            char a[16], b[16];
            snprintf(a, sizeof a, "%d", sv[1]);
            snprintf(b, sizeof b, "%d", c);
            const char *argv[8];
            int k = 0;
            for (; k < 4 && args[k]; k++) argv[k] = args[k];
            argv[k++] = a;
            argv[k++] = b;
            argv[k] = NULL;
            execv("/proc/self/exe", (char *const *)argv);
            _exit(127);
        }
        close(sv[1]);
        socks[c] = sv[0];
        send_fds(socks[c], fds, n);
    }
}

/* Waits for each child's 'd' (done) on its socket, then for its exit status 0. */
static inline void wait_children(int children, const pid_t *pids, const int *socks) {
    for (int c = 0; c < children; c++) {
        char done = 0;
        EXPECT(read(socks[c], &done, 1) == 1 && done == 'd');
        int status = 0;
        EXPECT(waitpid(pids[c], &status, 0) == pids[c] && WIFEXITED(status) && WEXITSTATUS(status) == 0);
        close(socks[c]);
    }
}
