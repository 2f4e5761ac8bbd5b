/* bench_util.h — the timing and statistics helpers the bench/ programs
 * share: a monotonic clock in seconds, the median of a sample, positional
 * int arguments with defaults, and a growing sample of times with its
 * percentiles (the grammar benches' compile and mask times). Header only, so
 * that llamacpp_ref.c (built on its own, without libwick) can use it too. */
#ifndef WICK_BENCH_UTIL_H
#define WICK_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Positional argument i as an int, or dflt when there are fewer arguments. */
static inline int arg_int(int argc, char **argv, int i, int dflt) { return argc > i ? atoi(argv[i]) : dflt; }

/* Median of v[0..n) (sorts v in place); 0 for an empty sample. */
static inline double median(double *v, int n) {
    if (n <= 0) return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* A sample that grows as measurements come (one time each). */
typedef struct samples {
    double *v;
    size_t n, cap;
} samples;

/* Append x to t (exits when out of memory). */
static inline void samples_push(samples *t, double x) {
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 4096;
        t->v = realloc(t->v, t->cap * sizeof *t->v);
        if (!t->v) exit(1);
    }
    t->v[t->n++] = x;
}

/* The p-quantile (p in 0..1, nearest rank) of v[0..n) sorted ascending; 0
 * for an empty sample. */
static inline double pct(const double *v, size_t n, double p) {
    if (!n) return 0;
    const size_t k = (size_t)(p * (double)(n - 1) + 0.5);
    return v[k < n ? k : n - 1];
}

/* The grammar benches' summary of compile times (ms) and mask times (us):
 * sorts both samples, then prints p50/p90/p99/max of each (and the masks'
 * count and mean) as two lines on stdout. */
static inline void print_compile_mask_times(samples *compile, samples *mask) {
    qsort(compile->v, compile->n, sizeof *compile->v, cmp_double);
    qsort(mask->v, mask->n, sizeof *mask->v, cmp_double);
    double mean = 0;
    for (size_t i = 0; i < mask->n; i++) mean += mask->v[i] / (double)mask->n;
    printf("compile ms: p50 %.2f p90 %.2f p99 %.2f max %.2f\n", pct(compile->v, compile->n, .5),
           pct(compile->v, compile->n, .9), pct(compile->v, compile->n, .99),
           compile->n ? compile->v[compile->n - 1] : 0);
    printf("mask us (%zu masks): p50 %.1f p90 %.1f p99 %.1f max %.1f mean %.1f\n", mask->n, pct(mask->v, mask->n, .5),
           pct(mask->v, mask->n, .9), pct(mask->v, mask->n, .99), mask->n ? mask->v[mask->n - 1] : 0, mean);
}

#endif
