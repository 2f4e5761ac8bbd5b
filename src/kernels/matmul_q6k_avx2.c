/* matmul_q6k_avx2.c — owns the AVX2 Q6_K × Q8_K matmul kernel (twin:
 * mm_q6k_rows_scalar in matmul_q6k.c; contract in matmul_q6k.h; prefetch and
 * row driver shared with the AVX-512 kernel in matmul_q6k_simd.h).
 *
 * One weight row at a time, against up to 4 tokens: each super-block is
 * unpacked once into 8 vectors of 32 unsigned 6-bit quants u = q + 32 in
 * element order (vector 4h+k holds ql[64h + 32(k&1) ..] low/high nibbles
 * with bits 2k..2k+1 of qh[32h ..] on top), then per token and vector
 * maddubs(u, x) gives int16 pair sums (|.| <= 2·63·127, no saturation) and
 * madd with the vector's two group scales (low lane group 2v, high lane group
 * 2v+1) gives int32. Subtracting 32·Σ scales[g]·bsums[g] (one madd) turns
 * Σ u·x into Σ (u - 32)·x: the super-block's int32 lanes sum to the exact
 * isum of the scalar kernel. Lanes are converted to float and FMA'd with
 * d_w·d_x; only the float accumulation order differs from the scalar twin. */
#if defined(__x86_64__) || defined(__i386__)

#include <immintrin.h>

#include "kernels/convert.h"
#include "kernels/matmul_q6k.h"
#include "kernels/matmul_q6k_simd.h"
#include "kernels/simd_math.h"

#define T256 __attribute__((target("avx2,fma,f16c")))
#define INLINE static inline __attribute__((always_inline))

/* One weight row (wr) against the NT <= 4 token rows of X; y[t*ldy] gets token t. */
T256 INLINE void q6k_row(const int NT, const block_q6_K *wr, const block_q8_K *X, int nb, float *y,
                         int ldy) {
    const __m256i m4 = _mm256_set1_epi8(0x0f), m3 = _mm256_set1_epi8(0x30);
    const __m256i pick = _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2,
                                          3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3);
    __m256 acc[4];
#pragma GCC unroll 4
    for (int t = 0; t < NT; t++) acc[t] = _mm256_setzero_ps();
    for (int b = 0; b < nb; b++) {
        const block_q6_K *w = &wr[b];
        q6k_prefetch(w);
        __m256i u[8];
#pragma GCC unroll 2
        for (int h = 0; h < 2; h++) {
            const __m256i A = _mm256_loadu_si256((const __m256i *)(w->ql + 64 * h));
            const __m256i B = _mm256_loadu_si256((const __m256i *)(w->ql + 64 * h + 32));
            const __m256i H = _mm256_loadu_si256((const __m256i *)(w->qh + 32 * h));
            u[4 * h + 0] = _mm256_or_si256(_mm256_and_si256(A, m4), _mm256_and_si256(_mm256_slli_epi16(H, 4), m3));
            u[4 * h + 1] = _mm256_or_si256(_mm256_and_si256(B, m4), _mm256_and_si256(_mm256_slli_epi16(H, 2), m3));
            u[4 * h + 2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(A, 4), m4), _mm256_and_si256(H, m3));
            u[4 * h + 3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(B, 4), m4),
                                           _mm256_and_si256(_mm256_srli_epi16(H, 2), m3));
        }
        const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)w->scales));
        __m256i scv[8];
#pragma GCC unroll 8
        for (int v = 0; v < 8; v++)
            scv[v] = _mm256_shuffle_epi8(_mm256_permutevar8x32_epi32(sc16, _mm256_set1_epi32(v)), pick);
        const float dw = _cvtsh_ss(w->d);
#pragma GCC unroll 4
        for (int t = 0; t < NT; t++) {
            const block_q8_K *x = &X[(size_t)t * nb + b];
            __m256i s = _mm256_slli_epi32(
                _mm256_madd_epi16(sc16, _mm256_loadu_si256((const __m256i *)x->bsums)), 5);
            s = _mm256_sub_epi32(_mm256_setzero_si256(), s);
#pragma GCC unroll 8
            for (int v = 0; v < 8; v++) {
                const __m256i xv = _mm256_loadu_si256((const __m256i *)(x->qs + 32 * v));
                s = _mm256_add_epi32(s, _mm256_madd_epi16(_mm256_maddubs_epi16(u[v], xv), scv[v]));
            }
            acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_set1_ps(dw * x->d), acc[t]);
        }
    }
#pragma GCC unroll 4
    for (int t = 0; t < NT; t++) y[(size_t)t * ldy] = hsum256(acc[t]);
}

Q6K_DEFINE_ROWS(T256, mm_q6k_rows_avx2, q6k_row)

#endif
