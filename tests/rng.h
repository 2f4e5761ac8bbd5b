/* rng.h — the deterministic random numbers the kernel tests draw: xorshift64,
 * starting from a fixed state (a program may set rng_state first to get
 * another sequence), and floats uniform in [-1, 1) from 24 of its bits. */
#ifndef WICK_TESTS_RNG_H
#define WICK_TESTS_RNG_H

#include <stdint.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static inline uint32_t rnd_u32(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

static inline float rnd_f(void) { return (float)(rnd_u32() & 0xffffff) / (float)0x800000 - 1.0f; }

/* x[i] = scale × a uniform draw in [-1, 1). */
static inline void rnd_fill(float *x, int64_t n, float scale) {
    for (int64_t i = 0; i < n; i++) x[i] = rnd_f() * scale;
}

/* p = a uniformly shuffled 0..n-1 (Fisher-Yates). */
static inline void rnd_permutation(int32_t *p, int n) {
    for (int i = 0; i < n; i++) p[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(rnd_u32() % (uint32_t)(i + 1));
        int32_t t = p[i];
        p[i] = p[j], p[j] = t;
    }
}

#endif
