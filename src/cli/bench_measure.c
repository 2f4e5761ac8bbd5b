/* bench_measure.c — owns the measurements behind `wick bench` (see
 * bench_measure.h): a multi-threaded streaming read of a large buffer (on
 * transparent huge pages, as the weights are) for the memory bandwidth, and
 * the process's peak RSS. The CLI, the tests and bench/ link it; libwick.a
 * does not hold it. The read sums 64-bit words (mod 2^64) with
 * 64-byte AVX-512 loads where the CPU has them (narrower loads reach less
 * of the bandwidth), else plain C; both give the same sum. A reading is the
 * best of its passes, which alternate between a plain read and one with
 * the software prefetches the decode kernels use on this CPU
 * (kernel_tuning.prefetch, as a model load picks it): where those reach more than the hardware
 * prefetchers alone (Zen 5: ~4%), the ceiling is that much higher, so
 * decode is never measured against less than the memory gives. */
#include "cli/bench_measure.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

#include "core/clock.h"
#include "core/error.h"
#include "core/threadpool.h"
#include "kernels/cpu.h"
#include "kernels/tuning_env.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

uint64_t bench_sum_words_scalar(const uint64_t *p, size_t n) {
    uint64_t s[8] = {0};
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) s[k] += p[i + k];
    for (; i < n; i++) s[0] += p[i];
    return s[0] + s[1] + s[2] + s[3] + s[4] + s[5] + s[6] + s[7];
}

#if defined(__x86_64__) || defined(__i386__)
/* pf: a cpu_prefetch style, a constant in each instance. */
__attribute__((target("avx512f"))) static inline __attribute__((always_inline)) uint64_t
sum_words_avx512(const int pf, const size_t nta, const uint64_t *p, size_t n) {
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        cpu_prefetch_ahead(pf, (const char *)(p + i), 256, nta);
        a0 = _mm512_add_epi64(a0, _mm512_loadu_si512(p + i));
        a1 = _mm512_add_epi64(a1, _mm512_loadu_si512(p + i + 8));
        a2 = _mm512_add_epi64(a2, _mm512_loadu_si512(p + i + 16));
        a3 = _mm512_add_epi64(a3, _mm512_loadu_si512(p + i + 24));
    }
    /* Reduce in unsigned arithmetic: the sum wraps by design. */
    uint64_t lanes[8], s = 0;
    _mm512_storeu_si512(lanes, _mm512_add_epi64(_mm512_add_epi64(a0, a1), _mm512_add_epi64(a2, a3)));
    for (int k = 0; k < 8; k++) s += lanes[k];
    return s + bench_sum_words_scalar(p + i, n - i);
}

__attribute__((target("avx512f"))) static uint64_t sum_words_avx512_style(const kernel_tuning *kt, const uint64_t *p, size_t n,
                                                                             bool prefetch) {
    const size_t nta = (size_t)kt->nta_bytes;
    switch (prefetch ? kt->prefetch : PREFETCH_OFF) {
    case PREFETCH_NTA: return sum_words_avx512(PREFETCH_NTA, nta, p, n);
    case PREFETCH_L1L2: return sum_words_avx512(PREFETCH_L1L2, nta, p, n);
    default: return sum_words_avx512(PREFETCH_OFF, nta, p, n);
    }
}
#endif

uint64_t bench_sum_words(const kernel_tuning *kt, const uint64_t *p, size_t n, bool prefetch) {
#if defined(__x86_64__) || defined(__i386__)
    if (kt->isa >= ISA_AVX512) return sum_words_avx512_style(kt, p, n, prefetch);
#endif
    (void)kt, (void)prefetch;
    return bench_sum_words_scalar(p, n);
}

typedef struct bw_job {
    uint64_t *buf;
    size_t n; /* uint64 words */
    uint64_t sums[64];
    bool fill, prefetch;
    kernel_tuning tuning; /* the kernels' (kernel_tuning_from_env): the probe reads as decode does */
} bw_job;

static void bw_task(void *arg, int ith, int nth) {
    bw_job *j = arg;
    int64_t lo, hi;
    pool_split((int64_t)j->n, ith, nth, 64, &lo, &hi);
    uint64_t *p = j->buf;
    if (j->fill) {
        for (int64_t i = lo; i < hi; i++) p[i] = (uint64_t)i * 0x9e3779b97f4a7c15ull;
        return;
    }
    const uint64_t s = bench_sum_words(&j->tuning, p + lo, (size_t)(hi - lo), j->prefetch);
    if (ith < 64) j->sums[ith] = s;
}


struct bench_membw_buf {
    void *buf;
    size_t bytes;
    wick_pool *pool;
    bw_job job;
};

bench_membw_buf *bench_membw_new(size_t bytes, int n_threads, wick_error *err) {
    bytes &= ~(size_t)511;
    if (bytes == 0) {
        wick_fail(err, "bandwidth buffer too small");
        return NULL;
    }
    bench_membw_buf *b = calloc(1, sizeof *b);
    if (!b) {
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    b->buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (b->buf == MAP_FAILED) {
        free(b);
        wick_fail(err, "cannot map %zu MiB for the bandwidth probe", bytes >> 20);
        return NULL;
    }
    b->bytes = bytes;
    madvise(b->buf, bytes, MADV_HUGEPAGE); /* as the weights: fewer TLB misses, a higher (stricter) figure */
    if (!(b->pool = pool_new(n_threads, err))) {
        munmap(b->buf, bytes);
        free(b);
        return NULL;
    }
    b->job = (bw_job){.buf = b->buf, .n = bytes / 8, .fill = true, .tuning = kernel_tuning_from_env(cpu_get_features())};
    pool_run(b->pool, bw_task, &b->job); /* commit the pages (each thread its own part) */
    b->job.fill = false;
    return b;
}

double bench_membw_read(bench_membw_buf *b, int passes) {
    double best = 0;
    volatile uint64_t sink = 0;
    for (int r = 0; r < (passes > 0 ? passes : 1); r++) {
        b->job.prefetch = r % 2 == 1;
        double t0 = wick_now_s();
        pool_run(b->pool, bw_task, &b->job);
        double dt = wick_now_s() - t0;
        for (int i = 0; i < 64; i++) sink += b->job.sums[i];
        if (dt > 0 && b->bytes / dt / 1e9 > best) best = b->bytes / dt / 1e9;
    }
    (void)sink;
    return best;
}

void bench_membw_free(bench_membw_buf *b) {
    if (!b) return;
    pool_free(b->pool);
    munmap(b->buf, b->bytes);
    free(b);
}

double bench_membw(size_t bytes, int n_threads, int passes, wick_error *err) {
    bench_membw_buf *b = bench_membw_new(bytes, n_threads, err);
    if (!b) return -1;
    const double gbs = bench_membw_read(b, passes);
    bench_membw_free(b);
    return gbs;
}

size_t bench_peak_rss(void) {
    FILE *f = fopen("/proc/self/status", "r");
    if (f) {
        char line[256];
        unsigned long kb = 0;
        bool found = false;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "VmHWM: %lu kB", &kb) == 1) {
                found = true;
                break;
            }
        fclose(f);
        if (found) return (size_t)kb * 1024;
    }
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0) return (size_t)ru.ru_maxrss * 1024;
    return 0;
}
