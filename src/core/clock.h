/* clock.h — the clocks wick reads: the monotonic clock for durations,
 * timeouts and rates (it never jumps when the system time is set), and the
 * wall clock for timestamps shown to people and clients. */
#ifndef WICK_CORE_CLOCK_H
#define WICK_CORE_CLOCK_H

#include <time.h>

/* CLOCK_MONOTONIC in milliseconds and seconds. */
static inline double wick_now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}
static inline double wick_now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* CLOCK_REALTIME in seconds since the epoch: for timestamps (a reply's
 * "created", an event's time), never for measuring a duration. */
static inline double wick_wall_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The time `ms` milliseconds from now on `clock`, as the absolute deadline
 * pthread_cond_timedwait takes (on the clock its condition variable was
 * made with: CLOCK_REALTIME unless set otherwise). */
static inline struct timespec wick_deadline_ms(clockid_t clock, double ms) {
    struct timespec t;
    clock_gettime(clock, &t);
    if (ms < 0) ms = 0;
    const long long ns = (long long)t.tv_nsec + (long long)(ms * 1e6);
    t.tv_sec += (time_t)(ns / 1000000000LL);
    t.tv_nsec = (long)(ns % 1000000000LL);
    return t;
}

#endif
