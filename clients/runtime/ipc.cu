// IPC between two processes: the parent exports cudaMalloc memory with
// cudaIpcGetMemHandle, a child (fork + exec of this program) opens the handle, reads the
// parent's data and writes its own, and the parent sees it.
#include "common.h"
#include <sys/wait.h>
#include <unistd.h>

static int child(const char *hex) {
    cudaIpcMemHandle_t h;
    for (int i = 0; i < 64; i++) sscanf(hex + 2 * i, "%2hhx", (unsigned char *)&h.reserved[i]);
    void *p = NULL;
    T(cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess));
    NEED(p);
    unsigned char buf[4096];
    T(cudaMemcpy(buf, p, sizeof buf, cudaMemcpyDeviceToHost));
    int ok = 1;
    for (int i = 0; i < 4096; i++) ok &= buf[i] == (unsigned char)(i ^ 0x5a);
    CHECK(ok);
    OUT("child read the parent's data: %d", ok);
    T(cudaMemset(p, 0xc3, 128));
    T(cudaDeviceSynchronize());
    T(cudaIpcCloseMemHandle(p));
    T(cudaIpcCloseMemHandle(p));
    T(cudaGetLastError());
    return finish();
}

int main(int argc, char **argv) {
    if (argc == 3 && !strcmp(argv[1], "--child")) return child(argv[2]);
    void *d = NULL;
    T(cudaMalloc(&d, 1 << 20));
    NEED(d);
    unsigned char buf[4096];
    for (int i = 0; i < 4096; i++) buf[i] = (unsigned char)(i ^ 0x5a);
    T(cudaMemcpy(d, buf, sizeof buf, cudaMemcpyHostToDevice));
    cudaIpcMemHandle_t h;
    T(cudaIpcGetMemHandle(&h, d));
    T(cudaIpcGetMemHandle(&h, NULL));
    T(cudaGetLastError());
    T(cudaIpcGetMemHandle(&h, d));
    char hex[129];
    for (int i = 0; i < 64; i++) sprintf(hex + 2 * i, "%02x", (unsigned char)h.reserved[i]);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        execl(argv[0], argv[0], "--child", hex, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    OUT("child exited with %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    T(cudaMemcpy(buf, d, sizeof buf, cudaMemcpyDeviceToHost));
    CHECK(buf[0] == 0xc3 && buf[127] == 0xc3 && buf[128] == (unsigned char)(128 ^ 0x5a));
    OUT("parent sees the child's write: %d", buf[0] == 0xc3);
    void *self = NULL;
    T(cudaIpcOpenMemHandle(&self, h, cudaIpcMemLazyEnablePeerAccess));
    T(cudaGetLastError());
    T(cudaFree(d));
    return finish();
}
