/* cuGetProcAddress over every base name of the export list, at every CUDA version and
 * with each stream flag: which exported symbol comes back (dladdr names it), or the
 * status. Runs of versions with the same answer are printed once, so the table stays
 * readable: `cuMemcpy flags=ptds 4000..6050 version-insufficient | 7000..13000 cuMemcpy_ptds`.
 * Usage: proc_address_table EXPORTS.txt */
#define _GNU_SOURCE
#include "probe.h"
#include <dlfcn.h>

static const int versions[] = {0,    1000, 2000, 2010, 2020, 2030, 3000, 3010, 3020, 3050, 4000, 4010, 4020,
                               5000, 5050, 6000, 6050, 6500, 7000, 7050, 8000, 9000, 9010, 9020, 9100, 10000,
                               10010, 10020, 11000, 11010, 11020, 11030, 11040, 11050, 11060, 11070, 11080,
                               12000, 12010, 12020, 12030, 12040, 12050, 12060, 12080, 12090, 13000};
#define NV (int)(sizeof versions / sizeof *versions)

static int is_suffix(const char *s, size_t len, const char *suf) {
    size_t n = strlen(suf);
    return len > n && memcmp(s + len - n, suf, n) == 0;
}

/* The base name of an export: without _ptds/_ptsz and without a trailing _vN. */
static void base_name(const char *name, char *out, size_t cap) {
    size_t len = strlen(name);
    for (;;) {
        if (is_suffix(name, len, "_ptds") || is_suffix(name, len, "_ptsz")) { len -= 5; continue; }
        size_t i = len;
        while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9') i--;
        if (i < len && i >= 2 && name[i - 1] == 'v' && name[i - 2] == '_') { len = i - 2; continue; }
        break;
    }
    snprintf(out, cap, "%.*s", (int)len, name);
}

static void answer(const char *name, int version, unsigned long long flags, char *out, size_t cap) {
    void *fn = NULL;
    CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)-1;
    CUresult r = cuGetProcAddress(name, &fn, version, flags, &st);
    if (r != CUDA_SUCCESS) { snprintf(out, cap, "%s", rname(r)); return; }
    if (st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND) { snprintf(out, cap, "not-found"); return; }
    if (st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT) { snprintf(out, cap, "version-insufficient"); return; }
    if (st != CU_GET_PROC_ADDRESS_SUCCESS) { snprintf(out, cap, "status-%d", (int)st); return; }
    Dl_info info;
    if (fn && dladdr(fn, &info) && info.dli_sname && info.dli_saddr == fn)
        snprintf(out, cap, "%s", info.dli_sname);
    else
        snprintf(out, cap, fn ? "unexported-function" : "null");
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s EXPORTS.txt\n", argv[0]); return 2; }
    MUST(cuInit(0));
    FILE *f = fopen(argv[1], "r");
    if (!f) { perror(argv[1]); return 2; }
    static char names[1024][128];
    int n = 0;
    char line[256], base[128];
    while (fgets(line, sizeof line, f) && n < 1024) {
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0]) continue;
        base_name(line, base, sizeof base);
        int seen = 0;
        for (int i = 0; i < n && !seen; i++) seen = strcmp(names[i], base) == 0;
        if (!seen) snprintf(names[n++], sizeof names[0], "%s", base);
    }
    fclose(f);
    printf("%d base names, %d versions, flags default legacy ptds\n", n, NV);
    const unsigned long long flag_values[] = {CU_GET_PROC_ADDRESS_DEFAULT, CU_GET_PROC_ADDRESS_LEGACY_STREAM,
                                              CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM};
    const char *flag_names[] = {"default", "legacy", "ptds"};
    for (int i = 0; i < n; i++) {
        for (int fl = 0; fl < 3; fl++) {
            printf("%s %s:", names[i], flag_names[fl]);
            char prev[160] = "", cur[160];
            int from = 0;
            for (int v = 0; v <= NV; v++) {
                if (v < NV) answer(names[i], versions[v], flag_values[fl], cur, sizeof cur);
                if (v == NV || (v > 0 && strcmp(cur, prev) != 0)) {
                    printf(" %d..%d %s%s", versions[from], versions[v - 1], prev, v == NV ? "" : " |");
                    from = v;
                }
                snprintf(prev, sizeof prev, "%s", cur);
            }
            printf("\n");
        }
    }
    /* Flags outside the three, and a name given with its version suffix. */
    char out[160];
    answer("cuMemAlloc", 13000, 4, out, sizeof out);
    printf("cuMemAlloc flags=4 13000: %s\n", out);
    answer("cuMemAlloc", 13000, 3, out, sizeof out);
    printf("cuMemAlloc flags=3 13000: %s\n", out);
    answer("cuMemAlloc_v2", 13000, 0, out, sizeof out);
    printf("cuMemAlloc_v2 default 13000: %s\n", out);
    answer("cuMemcpy_ptds", 13000, 0, out, sizeof out);
    printf("cuMemcpy_ptds default 13000: %s\n", out);
    return 0;
}
