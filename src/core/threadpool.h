/* threadpool.h — a fixed pool of worker threads for data-parallel ops.
 *
 * pool_run(p, fn, arg) calls fn(arg, ith, nth) once for every ith in [0, nth)
 * — the caller runs ith = 0 itself — and returns when all have returned.
 * Workers spin briefly then sleep between jobs, so back-to-back small ops
 * (hundreds per decode step) cost little. A NULL pool means one thread.
 * pool_run must not be called concurrently on the same pool. */
#ifndef WICK_CORE_THREADPOOL_H
#define WICK_CORE_THREADPOOL_H

#include "wick.h"

typedef struct wick_pool wick_pool;
typedef void (*pool_fn)(void *arg, int ith, int nth);

wick_pool *pool_new(int n_threads, wick_error *err);
void pool_free(wick_pool *p);
int pool_size(const wick_pool *p); /* 1 for NULL */
void pool_run(wick_pool *p, pool_fn fn, void *arg);

/* Split [0, n) into nth near-equal contiguous parts; part ith is [*lo, *hi).
 * `align` (>= 1) rounds part boundaries to multiples of it. */
void pool_split(int64_t n, int ith, int nth, int64_t align, int64_t *lo, int64_t *hi);

#endif
