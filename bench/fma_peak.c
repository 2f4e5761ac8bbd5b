/* fma_peak.c — the machine's float multiply-add peak: each of T threads runs
 * 10 independent chains of 8-lane FMAs (AVX2; enough chains to cover the
 * FMA latency on two pipes) out of registers, and the program prints the
 * multiply-adds per second of all of them together. The ceiling the float
 * matmuls are measured against (prefill of F16/BF16/F32 weights), and a
 * check of whether the CPUs given share their FMA units (SMT siblings:
 * 2 threads give ~1x one) or not (~2x).
 * Usage: build/bench/fma_peak [threads 1] [seconds-ish scale 2] */
#include <pthread.h>
#include <stdio.h>

#include "bench_util.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define CHAINS 10

static long g_iters;

__attribute__((target("avx2,fma"))) static void *run(void *arg) {
    __m256 acc[CHAINS];
    for (int i = 0; i < CHAINS; i++) acc[i] = _mm256_set1_ps((float)i);
    const __m256 a = _mm256_set1_ps(0.999f), b = _mm256_set1_ps(0.001f);
    for (long it = 0; it < g_iters; it++)
#pragma GCC unroll 10
        for (int i = 0; i < CHAINS; i++) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
    float s = 0;
    for (int i = 0; i < CHAINS; i++) s += _mm256_cvtss_f32(acc[i]);
    *(float *)arg = s;
    return NULL;
}

int main(int argc, char **argv) {
    const int n = arg_int(argc, argv, 1, 1), scale = arg_int(argc, argv, 2, 2);
    if (n < 1 || n > 64 || scale < 1 || scale > 100) {
        fprintf(stderr, "usage: fma_peak [threads 1..64] [scale 1..100]\n");
        return 1;
    }
    g_iters = 100000000L * scale;
    pthread_t t[64];
    float sink[64];
    const double t0 = now_s();
    for (int i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, run, &sink[i]) != 0) return 1;
    for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
    const double dt = now_s() - t0;
    printf("%d thread%s: %.1f GMAC/s (8-lane FMAs, %d chains a thread)\n", n, n > 1 ? "s" : "",
           (double)n * (double)g_iters * CHAINS * 8 / dt * 1e-9, CHAINS);
    return sink[0] == 12345.0f; /* keeps the chains alive */
}
#else
int main(void) {
    fprintf(stderr, "fma_peak: x86-64 only\n");
    return 1;
}
#endif
