/* r16_avx2.h — helpers shared by the AVX2 kernels of the interleaved layouts
 * (matmul_repack_avx2.c, matmul_quant_r16_avx2.c, matmul_quant_r16_k_avx2.c):
 * the broadcast of 4 activation bytes, the barrier that keeps an integer sum
 * chain in order, the lane mask of an 8-row half ("octet") and the load and
 * store of an octet's sums under it. Internal to src/kernels; include only
 * from files compiled for x86-64. */
#ifndef WICK_KERNELS_R16_AVX2_H
#define WICK_KERNELS_R16_AVX2_H

#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/tensor.h"

#define R16_AVX2 __attribute__((target("avx2,fma,f16c"))) static inline __attribute__((always_inline))

/* 4 activation bytes at p in every 32-bit lane. */
R16_AVX2 __m256i r16_avx2_bx4(const int8_t *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return _mm256_set1_epi32(v);
}

/* Column group g (bytes 4g..4g+3) of activation block xb in every lane. */
R16_AVX2 __m256i r16_avx2_bx(const block_q8_0 *xb, int g) { return r16_avx2_bx4(xb->qs + 4 * g); }

/* An empty asm that makes *v opaque: keeps a sum chain in the order written,
 * where GCC would otherwise reassociate integer adds into a tree whose
 * partial products spill to the stack. */
R16_AVX2 void r16_avx2_keep(__m256i *v) { __asm__("" : "+x"(*v)); }

/* Lanes of the octet at row rt that lie in [r0, r1); *full if all do. */
R16_AVX2 __m256i r16_avx2_octet_lanes(int rt, int r0, int r1, bool *full) {
    *full = rt >= r0 && rt + 8 <= r1;
    const __m256i idx = _mm256_add_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(rt));
    return _mm256_and_si256(_mm256_cmpgt_epi32(idx, _mm256_set1_epi32(r0 - 1)),
                            _mm256_cmpgt_epi32(_mm256_set1_epi32(r1), idx));
}

/* An octet's float sums: 0 if first, else continued from y (the rows in
 * `lanes` only, unless full). */
R16_AVX2 __m256 r16_avx2_acc_load(const float *y, bool first, bool full, __m256i lanes) {
    return first ? _mm256_setzero_ps() : full ? _mm256_loadu_ps(y) : _mm256_maskload_ps(y, lanes);
}

/* An octet's float sums back to y (the rows in `lanes` only, unless full). */
R16_AVX2 void r16_avx2_acc_store(float *y, __m256 v, bool full, __m256i lanes) {
    if (full) _mm256_storeu_ps(y, v);
    else _mm256_maskstore_ps(y, lanes, v);
}

#endif
