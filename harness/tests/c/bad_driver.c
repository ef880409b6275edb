/* Drivers that misbehave, for testing the harness: BAD_CRASH segfaults in cuInit,
 * BAD_HANG never returns from it, BAD_GARBAGE returns codes no driver has and writes
 * garbage through every out-pointer it is given. */
#include <signal.h>
#include <stddef.h>
#include <unistd.h>

int cuInit(unsigned int flags) {
    (void)flags;
#if defined(BAD_CRASH)
    *(volatile int *)0 = 1; /* a real fault, as a driver dereferencing a bad pointer makes */
#elif defined(BAD_HANG)
    for (;;) pause();
#endif
    return 0;
}

#if defined(BAD_GARBAGE)
int cuDriverGetVersion(int *v) { if (v) *v = -77; return 0; }
int cuDeviceGetCount(int *n) { if (n) *n = 0x7fffffff; return 987654; }
int cuMemAddressReserve(unsigned long long *p, size_t s, size_t a, unsigned long long h, unsigned long long f) {
    (void)s; (void)a; (void)h; (void)f;
    if (p) *p = 0xdeadbeefdeadbeefULL;
    return 0;
}
int cuGetErrorName(int e, const char **s) { (void)e; if (s) *s = NULL; return 0; }
#endif
