/* steal.h — contiguous work ranges with stealing, for ops whose threads
 * should each stream one sequential part (decode matmuls).
 *
 * steal_init splits [0, n) units into nth contiguous ranges, range ith for
 * thread ith. The owner takes its range from the front, a few units at a
 * time (steal_own); a thread done with its own takes half of what is left
 * of another's from the back (steal_take), so a thread slowed by a noisy
 * neighbour leaves its last units to the rest while every stream stays
 * sequential. Each range is one atomic word on its own cache line; every
 * unit is handed out exactly once. Nothing allocates; the set lives where
 * the caller puts it (the stack of the thread that starts the op). */
#ifndef WICK_CORE_STEAL_H
#define WICK_CORE_STEAL_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define STEAL_MAX_THREADS 32
#define STEAL_MAX_UNITS 0xffffffffu

typedef struct steal_set {
    int nth;
    struct {
        alignas(64) _Atomic uint64_t span; /* next | end << 32: units [next, end) not yet handed out */
    } range[STEAL_MAX_THREADS];
} steal_set;

/* False (and nothing set) unless 1 <= nth <= STEAL_MAX_THREADS and n <= STEAL_MAX_UNITS. */
bool steal_init(steal_set *s, int64_t n, int nth);

/* Up to `want` (>= 1) units from the front of range ith: returns how many
 * (0 when it is empty) and the first in *u0. */
int64_t steal_own(steal_set *s, int ith, int64_t want, int64_t *u0);

/* Half of what is left of another thread's range, taken from its back,
 * trying the ranges after ith in turn; none from a range with fewer than 2
 * units left (its owner reads them faster in its stream than a thief
 * starting cold). Returns how many (0: nothing worth taking) and the first
 * in *u0. */
int64_t steal_take(steal_set *s, int ith, int64_t *u0);

#endif
