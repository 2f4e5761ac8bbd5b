/* matmul_q6k_avx512.c — owns the AVX-512 (F, BW, VL) Q6_K × Q8_K matmul
 * kernel (twin: mm_q6k_rows_scalar in matmul_q6k.c; contract in
 * matmul_q6k.h; prefetch and row driver shared with the AVX2 kernel in
 * matmul_q6k_simd.h).
 *
 * As the AVX2 kernel, with 64-byte vectors: half h of a super-block is two
 * vectors, ql[64h .. 64h+63] & 15 (elements 128h + 0..63 in order) and
 * ql[64h ..] >> 4 (elements 128h + 64..127), each topped with its two qh bits
 * from qh[32h .. 32h+31] broadcast to both 256-bit halves and shifted per
 * half by a per-word count (vpsllvw / vpsrlvw). maddubs(u, x) then vpmaddwd
 * with the vector's four group scales (vpermw of the 16 int16 scales) give
 * int32 lanes; 32·Σ scales·bsums is subtracted and the exact per-super-block
 * lanes go to float with one FMA by d_w·d_x. Only the float accumulation
 * order differs from the scalar twin. */
#if defined(__x86_64__) || defined(__i386__)

#include <immintrin.h>

#include "kernels/convert.h"
#include "kernels/matmul_q6k.h"
#include "kernels/matmul_q6k_simd.h"

#define T512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,f16c")))
#define INLINE static inline __attribute__((always_inline))

/* One weight row (wr) against the NT <= 4 token rows of X; y[t*ldy] gets token t. */
T512 INLINE void q6k_row(const int NT, const block_q6_K *wr, const block_q8_K *X, int nb, float *y,
                         int ldy) {
    const __m512i m4 = _mm512_set1_epi8(0x0f), m3 = _mm512_set1_epi8(0x30);
    /* per-word shift counts: words 0..15 belong to k = 0 (lo) / 2 (hi), words 16..31 to k = 1 / 3 */
    const __m512i cnt_lo = _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(2), 1);
    const __m512i cnt_hi = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(2), 1);
    __m512i sidx[4];
#pragma GCC unroll 4
    for (int v = 0; v < 4; v++) /* vector v holds groups 4v..4v+3, 8 words each */
        sidx[v] = _mm512_inserti64x4(
            _mm512_castsi256_si512(_mm256_setr_epi16(
                (short)(4 * v), (short)(4 * v), (short)(4 * v), (short)(4 * v), (short)(4 * v), (short)(4 * v),
                (short)(4 * v), (short)(4 * v), (short)(4 * v + 1), (short)(4 * v + 1), (short)(4 * v + 1),
                (short)(4 * v + 1), (short)(4 * v + 1), (short)(4 * v + 1), (short)(4 * v + 1), (short)(4 * v + 1))),
            _mm256_setr_epi16((short)(4 * v + 2), (short)(4 * v + 2), (short)(4 * v + 2), (short)(4 * v + 2),
                              (short)(4 * v + 2), (short)(4 * v + 2), (short)(4 * v + 2), (short)(4 * v + 2),
                              (short)(4 * v + 3), (short)(4 * v + 3), (short)(4 * v + 3), (short)(4 * v + 3),
                              (short)(4 * v + 3), (short)(4 * v + 3), (short)(4 * v + 3), (short)(4 * v + 3)),
            1);
    __m512 acc[4];
#pragma GCC unroll 4
    for (int t = 0; t < NT; t++) acc[t] = _mm512_setzero_ps();
    for (int b = 0; b < nb; b++) {
        const block_q6_K *w = &wr[b];
        q6k_prefetch(w);
        __m512i u[4];
#pragma GCC unroll 2
        for (int h = 0; h < 2; h++) {
            const __m512i AB = _mm512_loadu_si512(w->ql + 64 * h);
            const __m512i H = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(w->qh + 32 * h)));
            u[2 * h] = _mm512_or_si512(_mm512_and_si512(AB, m4), _mm512_and_si512(_mm512_sllv_epi16(H, cnt_lo), m3));
            u[2 * h + 1] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(AB, 4), m4),
                                           _mm512_and_si512(_mm512_srlv_epi16(H, cnt_hi), m3));
        }
        const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)w->scales));
        const __m512i sc512 = _mm512_castsi256_si512(sc16);
        __m512i scv[4];
#pragma GCC unroll 4
        for (int v = 0; v < 4; v++) scv[v] = _mm512_permutexvar_epi16(sidx[v], sc512);
        const float dw = _cvtsh_ss(w->d);
#pragma GCC unroll 4
        for (int t = 0; t < NT; t++) {
            const block_q8_K *x = &X[(size_t)t * nb + b];
            const __m256i corr = _mm256_slli_epi32(
                _mm256_madd_epi16(sc16, _mm256_loadu_si256((const __m256i *)x->bsums)), 5);
            __m512i s = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_zextsi256_si512(corr));
#pragma GCC unroll 4
            for (int v = 0; v < 4; v++) {
                const __m512i xv = _mm512_loadu_si512(x->qs + 64 * v);
                s = _mm512_add_epi32(s, _mm512_madd_epi16(_mm512_maddubs_epi16(u[v], xv), scv[v]));
            }
            acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_set1_ps(dw * x->d), acc[t]);
        }
    }
#pragma GCC unroll 4
    for (int t = 0; t < NT; t++) y[(size_t)t * ldy] = _mm512_reduce_add_ps(acc[t]);
}

Q6K_DEFINE_ROWS(T512, mm_q6k_rows_avx512, q6k_row)

#endif
