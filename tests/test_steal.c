/* test_steal.c — core/steal.c, the contiguous work ranges with stealing that
 * balance decode matmuls: the split, the owner's front claims and the
 * thieves' back-half claims replayed in one thread step by step; then many
 * rounds on a pool of 3 threads (more than this machine's cores) where one
 * thread works slowly, checking that every unit is handed out exactly once
 * and that the others took part of its range; and the limits. */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "core/steal.h"
#include "core/threadpool.h"

static void test_sequence(void) {
    steal_set s;
    int64_t u0, n;
    CHECK(steal_init(&s, 100, 2)); /* ranges [0, 50) and [50, 100) */
    n = steal_own(&s, 0, 3, &u0);
    CHECK(n == 3 && u0 == 0);
    n = steal_own(&s, 1, 3, &u0);
    CHECK(n == 3 && u0 == 50); /* [53, 100) left */
    n = steal_take(&s, 0, &u0);
    CHECK(n == 23 && u0 == 77); /* half of 47 from the back: [77, 100) */
    n = steal_own(&s, 1, 100, &u0);
    CHECK(n == 24 && u0 == 53); /* the owner's rest: [53, 77) */
    CHECK(steal_own(&s, 1, 1, &u0) == 0);
    n = steal_take(&s, 1, &u0);
    CHECK(n == 23 && u0 == 27); /* half of [3, 50) from the back */
    n = steal_own(&s, 0, 1000, &u0);
    CHECK(n == 24 && u0 == 3);
    CHECK(steal_take(&s, 0, &u0) == 0 && steal_take(&s, 1, &u0) == 0);

    CHECK(steal_init(&s, 3, 2)); /* [0, 1) and [1, 3): a range of 1 is never stolen */
    CHECK(steal_take(&s, 1, &u0) == 0);
    CHECK(steal_take(&s, 0, &u0) == 1 && u0 == 2);
    CHECK(steal_take(&s, 0, &u0) == 0);

    CHECK(steal_init(&s, 0, 4));
    for (int t = 0; t < 4; t++) CHECK(steal_own(&s, t, 8, &u0) == 0 && steal_take(&s, t, &u0) == 0);
    CHECK(steal_init(&s, 7, 1));
    CHECK(steal_own(&s, 0, 0, &u0) == 1 && u0 == 0); /* want < 1 takes one */
    CHECK(steal_take(&s, 0, &u0) == 0);               /* no one to steal from */
    CHECK(!steal_init(&s, 10, 0));
    CHECK(!steal_init(&s, 10, STEAL_MAX_THREADS + 1));
    CHECK(!steal_init(&s, (int64_t)STEAL_MAX_UNITS + 1, 2));
    CHECK(!steal_init(&s, -1, 2));
    CHECK(steal_init(&s, STEAL_MAX_UNITS, STEAL_MAX_THREADS));
    int64_t total = 0;
    for (int t = 0; t < STEAL_MAX_THREADS; t++) total += steal_own(&s, t, INT64_MAX / 2, &u0);
    CHECK(total == (int64_t)STEAL_MAX_UNITS);
}

#define UNITS 240

typedef struct steal_round {
    steal_set s;
    _Atomic int hits[UNITS];
    _Atomic int foreign; /* units a thread took from another's range */
} steal_round;

static void spin_us(double us) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) / 1e3 < us);
}

static void round_task(void *arg, int ith, int nth) {
    steal_round *r = arg;
    int64_t u0, n;
    while ((n = steal_own(&r->s, ith, 2, &u0)) > 0)
        for (int64_t u = u0; u < u0 + n; u++) {
            if (ith == nth - 1) spin_us(20); /* the slow thread */
            atomic_fetch_add(&r->hits[u], 1);
        }
    while ((n = steal_take(&r->s, ith, &u0)) > 0)
        for (int64_t u = u0; u < u0 + n; u++) {
            atomic_fetch_add(&r->hits[u], 1);
            atomic_fetch_add(&r->foreign, 1);
        }
}

static void test_concurrent(void) {
    wick_error err;
    wick_pool *pool = pool_new(3, &err);
    CHECK(pool != NULL);
    if (!pool) return;
    int bad = 0, stolen = 0;
    for (int k = 0; k < 40; k++) {
        static steal_round r;
        memset(&r, 0, sizeof r);
        CHECK(steal_init(&r.s, UNITS - k, 3));
        pool_run(pool, round_task, &r);
        for (int u = 0; u < UNITS; u++) bad += atomic_load(&r.hits[u]) != (u < UNITS - k);
        stolen += atomic_load(&r.foreign);
    }
    CHECK_MSG(bad == 0, "%d units handed out other than once", bad);
    CHECK_MSG(stolen > 0, "no unit of the slow thread's range was taken by another");
    printf("units taken from another thread's range: %d (of %d)\n", stolen, 40 * UNITS);
    pool_free(pool);
}

int main(void) {
    RUN(test_sequence);
    RUN(test_concurrent);
    return check_summary("test_steal");
}
