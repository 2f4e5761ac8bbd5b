/* matmul_plain_avx2.c — owns the AVX2 + FMA + F16C matmul kernels (for x86-64
 * CPUs without AVX-512 VNNI).
 *
 * Register tiles of 4 weight rows × 2 tokens: each weight vector loaded (and
 * converted) is used for 2 tokens, 8 accumulators stay in registers.
 * Float weights: 8 elements per step, FMA into f32 lanes, reduced at the end.
 * Q8_0/Q4_0 weights: one block (32 int8) per step, signed weight quants w
 * (Q4_0: nibble - 8) against the token's Q8_0 quants x with the sign trick
 * maddubs(|w|, sign(x, w)) — |w| <= 128 and |x| <= 127 so the int16 pair
 * sums cannot saturate — then madd with ones to int32, convert, and one FMA
 * with d_w·d_x per block. Integer block sums are exact. */
#if defined(__x86_64__) || defined(__i386__)

#include <immintrin.h>
#include <string.h>

#include "kernels/convert.h"
#include "kernels/matmul_impl.h"
#include "kernels/simd_math.h"

#define T256 __attribute__((target("avx2,fma,f16c")))
#define INLINE static inline __attribute__((always_inline))

/* ---------------- float weights ---------------- */

T256 INLINE __m256 load_w8(const int wt, const void *row, int k) {
    if (wt == WICK_F32) return _mm256_loadu_ps((const float *)row + k);
    __m128i h = _mm_loadu_si128((const __m128i *)((const uint16_t *)row + k));
    if (wt == WICK_F16) return _mm256_cvtph_ps(h);
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

INLINE float w_scalar(const int wt, const void *row, int k) {
    if (wt == WICK_F32) return ((const float *)row)[k];
    if (wt == WICK_F16) return fp16_to_f32(((const uint16_t *)row)[k]);
    return bf16_to_f32(((const uint16_t *)row)[k]);
}

T256 INLINE void ftile(const int wt, const int RB, const int CB, const char *w, size_t row_bytes,
                       const float *x, int cols, float *y, int ldy) {
    __m256 acc[4][2];
#pragma GCC unroll 4
    for (int r = 0; r < RB; r++)
#pragma GCC unroll 2
        for (int c = 0; c < CB; c++) acc[r][c] = _mm256_setzero_ps();
    int k = 0;
    for (; k + 8 <= cols; k += 8) {
        __m256 xv[2];
#pragma GCC unroll 2
        for (int c = 0; c < CB; c++) xv[c] = _mm256_loadu_ps(x + (size_t)c * cols + k);
#pragma GCC unroll 4
        for (int r = 0; r < RB; r++) {
            __m256 wv = load_w8(wt, w + r * row_bytes, k);
#pragma GCC unroll 2
            for (int c = 0; c < CB; c++) acc[r][c] = _mm256_fmadd_ps(wv, xv[c], acc[r][c]);
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < RB; r++)
#pragma GCC unroll 2
        for (int c = 0; c < CB; c++) {
            float s = hsum256(acc[r][c]);
            for (int kk = k; kk < cols; kk++) s += w_scalar(wt, w + r * row_bytes, kk) * x[(size_t)c * cols + kk];
            y[(size_t)c * ldy + r] = s;
        }
}

T256 INLINE void frows(const int wt, const void *w, int cols, const float *x, int n, float *y,
                       int ldy, int r0, int r1) {
    const size_t rb = (size_t)cols * (wt == WICK_F32 ? 4 : 2);
    const char *wc = w;
    int r = r0;
    for (; r + 4 <= r1; r += 4) {
        int i = 0;
        for (; i + 2 <= n; i += 2)
            ftile(wt, 4, 2, wc + r * rb, rb, x + (size_t)i * cols, cols, y + (size_t)i * ldy + r, ldy);
        if (i < n) ftile(wt, 4, 1, wc + r * rb, rb, x + (size_t)i * cols, cols, y + (size_t)i * ldy + r, ldy);
    }
    for (; r < r1; r++) {
        int i = 0;
        for (; i + 2 <= n; i += 2)
            ftile(wt, 1, 2, wc + r * rb, rb, x + (size_t)i * cols, cols, y + (size_t)i * ldy + r, ldy);
        if (i < n) ftile(wt, 1, 1, wc + r * rb, rb, x + (size_t)i * cols, cols, y + (size_t)i * ldy + r, ldy);
    }
}

/* ---------------- quantized weights ---------------- */

/* Block b of a weight row as 32 signed int8 weights, and its scale. */
T256 INLINE __m256i load_wq(const int wt, const char *row, int b, float *d) {
    if (wt == WICK_Q8_0) {
        const block_q8_0 *blk = (const block_q8_0 *)row + b;
        *d = _cvtsh_ss(blk->d);
        return _mm256_loadu_si256((const __m256i *)blk->qs);
    }
    const block_q4_0 *blk = (const block_q4_0 *)row + b;
    *d = _cvtsh_ss(blk->d);
    __m128i v = _mm_loadu_si128((const __m128i *)blk->qs);
    __m256i q = _mm256_inserti128_si256(_mm256_castsi128_si256(v), _mm_srli_epi16(v, 4), 1);
    q = _mm256_and_si256(q, _mm256_set1_epi8(0x0f));
    return _mm256_sub_epi8(q, _mm256_set1_epi8(8));
}

T256 INLINE void qtile(const int wt, const int RB, const int CB, const char *w, size_t row_bytes,
                       const block_q8_0 *xb, const float *xd, int nb, float *y, int ldy) {
    __m256 acc[4][2];
#pragma GCC unroll 4
    for (int r = 0; r < RB; r++)
#pragma GCC unroll 2
        for (int c = 0; c < CB; c++) acc[r][c] = _mm256_setzero_ps();
    const __m256i ones = _mm256_set1_epi16(1);
    for (int b = 0; b < nb; b++) {
        __m256i xv[2];
        float dx[2];
#pragma GCC unroll 2
        for (int c = 0; c < CB; c++) {
            xv[c] = _mm256_loadu_si256((const __m256i *)xb[(size_t)c * nb + b].qs);
            dx[c] = xd[(size_t)c * nb + b];
        }
#pragma GCC unroll 4
        for (int r = 0; r < RB; r++) {
            float dw;
            const __m256i wv = load_wq(wt, w + r * row_bytes, b, &dw);
            const __m256i aw = _mm256_sign_epi8(wv, wv);
#pragma GCC unroll 2
            for (int c = 0; c < CB; c++) {
                const __m256i p16 = _mm256_maddubs_epi16(aw, _mm256_sign_epi8(xv[c], wv));
                const __m256 f = _mm256_cvtepi32_ps(_mm256_madd_epi16(p16, ones));
                acc[r][c] = _mm256_fmadd_ps(f, _mm256_set1_ps(dw * dx[c]), acc[r][c]);
            }
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < RB; r++)
#pragma GCC unroll 2
        for (int c = 0; c < CB; c++) y[(size_t)c * ldy + r] = hsum256(acc[r][c]);
}

T256 INLINE void qrows(const int wt, const void *w, int cols, const void *xq, int n, float *y,
                       int ldy, int r0, int r1) {
    const int nb = cols / WICK_QK;
    const size_t rb = dtype_row_bytes(wt, cols);
    const block_q8_0 *xb = xq;
    const float *xd = (const float *)((const char *)xq + mm_xq_scales_offset(cols, n));
    const char *wc = w;
    int r = r0;
    for (; r + 4 <= r1; r += 4) {
        int i = 0;
        for (; i + 2 <= n; i += 2)
            qtile(wt, 4, 2, wc + r * rb, rb, xb + (size_t)i * nb, xd + (size_t)i * nb, nb, y + (size_t)i * ldy + r, ldy);
        if (i < n) qtile(wt, 4, 1, wc + r * rb, rb, xb + (size_t)i * nb, xd + (size_t)i * nb, nb, y + (size_t)i * ldy + r, ldy);
    }
    for (; r < r1; r++) {
        int i = 0;
        for (; i + 2 <= n; i += 2)
            qtile(wt, 1, 2, wc + r * rb, rb, xb + (size_t)i * nb, xd + (size_t)i * nb, nb, y + (size_t)i * ldy + r, ldy);
        if (i < n) qtile(wt, 1, 1, wc + r * rb, rb, xb + (size_t)i * nb, xd + (size_t)i * nb, nb, y + (size_t)i * ldy + r, ldy);
    }
}

T256 void mm_plain_rows_avx2(const mm_call *c) {
    switch (c->wtype) {
    case WICK_F32: frows(WICK_F32, c->w, c->cols, c->x, c->n, c->y, c->ldy, c->r0, c->r1); break;
    case WICK_F16: frows(WICK_F16, c->w, c->cols, c->x, c->n, c->y, c->ldy, c->r0, c->r1); break;
    case WICK_BF16: frows(WICK_BF16, c->w, c->cols, c->x, c->n, c->y, c->ldy, c->r0, c->r1); break;
    case WICK_Q8_0: qrows(WICK_Q8_0, c->w, c->cols, c->xq, c->n, c->y, c->ldy, c->r0, c->r1); break;
    case WICK_Q4_0: qrows(WICK_Q4_0, c->w, c->cols, c->xq, c->n, c->y, c->ldy, c->r0, c->r1); break;
    default: break;
    }
}

#endif
