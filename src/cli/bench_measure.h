/* bench_measure.h — measurements for `wick bench`: memory read bandwidth
 * and peak resident memory. Nothing here prints. */
#ifndef WICK_CLI_BENCH_MEASURE_H
#define WICK_CLI_BENCH_MEASURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/cpu.h"
#include "wick.h"

/* Read bandwidth in GB/s (1e9 bytes/s): n_threads stream-read a freshly
 * written buffer of `bytes` (use much more than the last-level cache), best
 * of `passes`, which alternate between a plain read and one with the decode
 * kernels' software prefetches (pass 1 plain, 2 prefetched, ...). -1 with
 * err if the buffer cannot be had. */
double bench_membw(size_t bytes, int n_threads, int passes, wick_error *err);

/* The same probe with its buffer and threads kept between readings (for
 * probing often): new maps, commits and fills the buffer (NULL with err if
 * it cannot), read measures as bench_membw does, free releases it all. */
typedef struct bench_membw_buf bench_membw_buf;
bench_membw_buf *bench_membw_new(size_t bytes, int n_threads, wick_error *err);
double bench_membw_read(bench_membw_buf *b, int passes);
void bench_membw_free(bench_membw_buf *b);

/* Σ p[i] mod 2^64 (the probe's read loop; AVX-512 when kt->isa has it, else the
 * scalar twin; with `prefetch`, AVX-512 prefetches ahead in the style of
 * kt->prefetch). */
uint64_t bench_sum_words(const kernel_tuning *kt, const uint64_t *p, size_t n, bool prefetch);
uint64_t bench_sum_words_scalar(const uint64_t *p, size_t n);

/* Peak resident set size of this process in bytes (VmHWM, else getrusage). */
size_t bench_peak_rss(void);

#endif
