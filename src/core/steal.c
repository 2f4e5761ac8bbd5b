/* steal.c — owns the claiming of units from contiguous ranges (steal.h).
 *
 * Invariant: range t's word holds [next, end) with next <= end; units
 * before next were handed to the owner, units from end on to thieves; every
 * change is one compare-and-swap of the whole word, so owner and thieves
 * never hand out the same unit. Relaxed ordering suffices: the units are
 * indices, and the results they produce are published by the pool's own
 * synchronisation when the op ends. */
#include "core/steal.h"

#include "core/threadpool.h"

bool steal_init(steal_set *s, int64_t n, int nth) {
    if (nth < 1 || nth > STEAL_MAX_THREADS || n < 0 || (uint64_t)n > STEAL_MAX_UNITS) return false;
    s->nth = nth;
    for (int t = 0; t < nth; t++) {
        int64_t a, b;
        pool_split(n, t, nth, 1, &a, &b);
        atomic_init(&s->range[t].span, (uint64_t)a | (uint64_t)b << 32);
    }
    return true;
}

/* Claim from range t: up to `want` from the front, or (want == 0) half of
 * what is left from the back. */
static int64_t claim(steal_set *s, int t, int64_t want, int64_t *u0) {
    _Atomic uint64_t *w = &s->range[t].span;
    uint64_t cur = atomic_load_explicit(w, memory_order_relaxed);
    for (;;) {
        const int64_t next = (int64_t)(cur & 0xffffffffu), end = (int64_t)(cur >> 32);
        const int64_t left = end - next;
        const int64_t got = want > 0 ? (left < want ? left : want) : left / 2;
        if (got <= 0) return 0;
        const uint64_t upd = want > 0 ? (uint64_t)(next + got) | (uint64_t)end << 32
                                      : (uint64_t)next | (uint64_t)(end - got) << 32;
        if (atomic_compare_exchange_weak_explicit(w, &cur, upd, memory_order_relaxed, memory_order_relaxed)) {
            *u0 = want > 0 ? next : end - got;
            return got;
        }
    }
}

int64_t steal_own(steal_set *s, int ith, int64_t want, int64_t *u0) {
    return claim(s, ith, want > 0 ? want : 1, u0);
}

int64_t steal_take(steal_set *s, int ith, int64_t *u0) {
    for (int v = 1; v < s->nth; v++) {
        const int64_t got = claim(s, (ith + v) % s->nth, 0, u0);
        if (got > 0) return got;
    }
    return 0;
}
