/* threadpool.c — owns the worker threads of a wick_pool and the job hand-off
 * between pool_run() and them (see threadpool.h).
 *
 * Protocol (C11 atomics; futex on Linux for sleeping):
 *   - The caller writes job_fn/job_arg, sets `pending` = n_workers, then
 *     increments `gen` with release order. A worker that sees gen change
 *     (acquire) reads the job, runs it, and decrements `pending` (acq_rel);
 *     the worker that brings it to 0 wakes the caller if it sleeps.
 *   - Workers spin on `gen` for a short while, then announce themselves in
 *     `n_sleeping` and futex-wait on `gen`. The caller bumps gen before it
 *     reads n_sleeping, a worker announces before it re-checks gen (both
 *     seq_cst), so a wake-up is never lost and a job with every worker still
 *     spinning costs no system call. The caller waits on `pending` the same way.
 *   - job_fn/job_arg are plain fields: written only while no worker reads
 *     them (between the previous job's pending==0 and the next gen bump). */
#include "core/threadpool.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#define SPIN_ITERS 4096 /* ~50-200 µs of pause before sleeping */

struct wick_pool {
    int n_threads; /* including the caller */
    pthread_t *threads;
    _Atomic uint32_t gen;      /* job generation; workers wait on it */
    _Atomic uint32_t pending;  /* workers still running the current job */
    _Atomic int n_sleeping;    /* workers in (or about to enter) futex wait */
    _Atomic int caller_sleeping;
    _Atomic int stop;
    pool_fn job_fn;
    void *job_arg;
};

typedef struct worker_arg {
    wick_pool *pool;
    int ith;
} worker_arg;

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

#ifdef __linux__
static void futex_wait_u32(_Atomic uint32_t *addr, uint32_t expected) {
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}
static void futex_wake_all(_Atomic uint32_t *addr) {
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}
#else
/* Portable fallback: yield instead of sleeping. */
static void futex_wait_u32(_Atomic uint32_t *addr, uint32_t expected) {
    (void)addr, (void)expected;
    sched_yield();
}
static void futex_wake_all(_Atomic uint32_t *addr) { (void)addr; }
#endif

/* Wait until *addr != seen; returns the new value. */
static uint32_t wait_change(_Atomic uint32_t *addr, uint32_t seen, _Atomic int *sleeping) {
    for (int i = 0; i < SPIN_ITERS; i++) {
        uint32_t v = atomic_load_explicit(addr, memory_order_acquire);
        if (v != seen) return v;
        cpu_relax();
    }
    for (;;) {
        atomic_fetch_add(sleeping, 1); /* seq_cst: pairs with the waker's bump-then-read */
        uint32_t v = atomic_load(addr);
        if (v == seen) futex_wait_u32(addr, seen);
        atomic_fetch_sub(sleeping, 1);
        v = atomic_load_explicit(addr, memory_order_acquire);
        if (v != seen) return v;
    }
}

static void *worker_main(void *p) {
    worker_arg *wa = p;
    wick_pool *pool = wa->pool;
    const int ith = wa->ith;
    free(wa);
    uint32_t seen = 0;
    for (;;) {
        seen = wait_change(&pool->gen, seen, &pool->n_sleeping);
        if (atomic_load_explicit(&pool->stop, memory_order_acquire)) break;
        pool->job_fn(pool->job_arg, ith, pool->n_threads);
        if (atomic_fetch_sub(&pool->pending, 1) == 1) { /* seq_cst, then read the flag */
            if (atomic_load(&pool->caller_sleeping)) futex_wake_all(&pool->pending);
        }
    }
    return NULL;
}

wick_pool *pool_new(int n_threads, wick_error *err) {
    if (n_threads < 1) n_threads = 1;
    wick_pool *p = calloc(1, sizeof *p);
    if (!p) {
        wick_fail_code(err, WICK_E_NO_MEMORY, "thread pool: out of memory");
        return NULL;
    }
    p->n_threads = n_threads;
    atomic_init(&p->gen, 0);
    atomic_init(&p->pending, 0);
    atomic_init(&p->n_sleeping, 0);
    atomic_init(&p->caller_sleeping, 0);
    atomic_init(&p->stop, 0);
    if (n_threads > 1) {
        p->threads = calloc((size_t)(n_threads - 1), sizeof *p->threads);
        if (!p->threads) {
            free(p);
            wick_fail_code(err, WICK_E_NO_MEMORY, "thread pool: out of memory");
            return NULL;
        }
    }
    for (int i = 1; i < n_threads; i++) {
        worker_arg *wa = malloc(sizeof *wa);
        int rc = wa ? 0 : ENOMEM;
        if (wa) {
            wa->pool = p;
            wa->ith = i;
            rc = pthread_create(&p->threads[i - 1], NULL, worker_main, wa);
            if (rc) free(wa);
        }
        if (rc) {
            p->n_threads = i; /* the ones started so far */
            pool_free(p);
            wick_fail(err, "thread pool: cannot start thread %d of %d: %s", i, n_threads,
                      strerror(rc));
            return NULL;
        }
    }
    return p;
}

void pool_free(wick_pool *p) {
    if (!p) return;
    if (p->n_threads > 1) {
        atomic_store_explicit(&p->stop, 1, memory_order_release);
        atomic_fetch_add(&p->gen, 1);
        futex_wake_all(&p->gen);
        for (int i = 1; i < p->n_threads; i++) pthread_join(p->threads[i - 1], NULL);
    }
    free(p->threads);
    free(p);
}

int pool_size(const wick_pool *p) { return p ? p->n_threads : 1; }

void pool_run(wick_pool *p, pool_fn fn, void *arg) {
    if (!p || p->n_threads == 1) {
        fn(arg, 0, 1);
        return;
    }
    p->job_fn = fn;
    p->job_arg = arg;
    atomic_store_explicit(&p->pending, (uint32_t)(p->n_threads - 1), memory_order_relaxed);
    atomic_fetch_add(&p->gen, 1); /* seq_cst: publishes the job, then read n_sleeping */
    if (atomic_load(&p->n_sleeping) > 0) futex_wake_all(&p->gen);

    fn(arg, 0, p->n_threads);

    uint32_t left = atomic_load_explicit(&p->pending, memory_order_acquire);
    for (int i = 0; left != 0 && i < SPIN_ITERS; i++) {
        cpu_relax();
        left = atomic_load_explicit(&p->pending, memory_order_acquire);
    }
    while (left != 0) {
        atomic_store(&p->caller_sleeping, 1);
        left = atomic_load(&p->pending);
        if (left != 0) futex_wait_u32(&p->pending, left);
        atomic_store(&p->caller_sleeping, 0);
        left = atomic_load_explicit(&p->pending, memory_order_acquire);
    }
}

void pool_split(int64_t n, int ith, int nth, int64_t align, int64_t *lo, int64_t *hi) {
    if (align < 1) align = 1;
    if (nth < 1) nth = 1;
    int64_t units = (n + align - 1) / align;
    int64_t a = units * ith / nth * align;
    int64_t b = units * (ith + 1) / nth * align;
    *lo = a < n ? a : n;
    *hi = b < n ? b : n;
}
