/* bench_util.h — the timing and statistics helpers the bench/ programs
 * share: a monotonic clock in seconds, the median of a sample and positional
 * int arguments with defaults. Header only, so that llamacpp_ref.c (built on
 * its own, without libwick) can use it too. */
#ifndef WICK_BENCH_UTIL_H
#define WICK_BENCH_UTIL_H

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

#endif
