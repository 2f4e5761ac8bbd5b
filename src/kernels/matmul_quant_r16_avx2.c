/* matmul_quant_r16_avx2.c — owns the AVX2 kernel of the interleaved Q5_0
 * layout (WICK_Q5_0_R16, layout in matmul_quant_r16.h; scalar twin in
 * matmul_quant_r16.c), for x86-64 CPUs without AVX-512 VNNI; Q4_K and
 * Q6_K are in matmul_quant_r16_k_avx2.c. The other types of
 * matmul_quant_r16.h keep the file layout on such CPUs (matmul_repack_type).
 *
 * A group's 64-byte vector holds its 16 rows' 4-byte column groups; each
 * 32-byte half ("octet", 8 rows) is one YMM register, lane i = row i. Per
 * block, octet and token: each column group's unsigned 5-bit values (the
 * nibble, with the fifth bit taken from the bit plane) meet a broadcast of
 * the token's 4 activation bytes in VPMADDUBSW; 4 groups' int16 pair sums
 * are added before VPMADDWD with ones (4 × 2 × 31 × 127 < 32768), then
 * -16·Σx: each row's exact int32 Σ (q - 16)·x, as THE DEFINITION
 * (matmul_quant.h) has it. Then per block, in block order, one FMA of
 * (float)Σ with d_w·d_x into the row's float sum: the definition's
 * operations, so results are bit-identical to the scalar twin.
 *
 * One token: each group is one pass over its blocks, both octets per block
 * (the groups one sequential stream). More tokens: passes of up to CT
 * tokens over one octet at a time, over chunks of blocks that stay in L1
 * (decode: DCHUNK blocks of a group) or L2 (prefill: RB rows × KC blocks). */
#if defined(__x86_64__) || defined(__i386__)

#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "kernels/matmul_impl.h"
#include "kernels/r16_avx2.h"
#include "kernels/matmul_quant_r16.h"

#define T256 __attribute__((target("avx2,fma,f16c")))
#define INLINE static inline __attribute__((always_inline))

#define DCHUNK 16 /* blocks per chunk in decode (a group's 16 Q5_0 blocks: 5.5 KiB, in L1) */
#define KC 32     /* blocks per chunk in prefill */
#define RB 256    /* rows per prefill row block (× KC blocks: 176 KiB of Q5_0, in L2) */
#define MAIN (5 * 64)
#define TAIL 32
#define CT R16_AVX2_CT

/* The fifth bits of column group g (plane byte k, bit g) at bit 4 of each byte. */
T256 INLINE __m256i fifth(__m256i plane, int g) {
    const __m256i s = g < 4 ? _mm256_slli_epi16(plane, 4 - g) : g == 4 ? plane : _mm256_srli_epi16(plane, g - 4);
    return _mm256_and_si256(s, _mm256_set1_epi8(0x10));
}

/* The octet kernel of r16_avx2_walk16 (see there). */
T256 INLINE void q5_run(const int Q, const int C, const char *gp, int nb, int o0, int b0, int b1, bool first,
                        const r16_avx2_tokens *x, bool full, __m256i lanes) {
    const __m256i ones = _mm256_set1_epi16(1), m = _mm256_set1_epi8(0x0f);
    __m256 acc[2][CT];
#pragma GCC unroll 2
    for (int q = 0; q < Q; q++)
#pragma GCC unroll 4
        for (int c = 0; c < C; c++) {
            float *yo = x->y[c] + 8 * q;
            acc[q][c] = r16_avx2_acc_load(yo, first, full, lanes);
        }
    for (int b = b0; b < b1; b++) {
        const char *mp = gp + mm_quant_r16_main_at(MAIN, TAIL, nb, b), *tp = gp + mm_quant_r16_tail_at(MAIN, TAIL, b);
        __m256i is[2][CT];
#pragma GCC unroll 2
        for (int q = 0; q < Q; q++) {
            const int o = 32 * (o0 + q);
            const __m256i plane = _mm256_loadu_si256((const __m256i *)(mp + o));
            __m256i lo16[CT], hi16[CT];
#pragma GCC unroll 4
            for (int j = 0; j < 4; j++) {
                const __m256i v = _mm256_loadu_si256((const __m256i *)(mp + 64 * (1 + j) + o));
                const __m256i lo = _mm256_or_si256(_mm256_and_si256(v, m), fifth(plane, j));
                const __m256i hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v, 4), m), fifth(plane, j + 4));
#pragma GCC unroll 4
                for (int c = 0; c < C; c++) {
                    const __m256i pl = _mm256_maddubs_epi16(lo, r16_avx2_bx((const block_q8_0 *)x->b[c] + b, j));
                    const __m256i ph = _mm256_maddubs_epi16(hi, r16_avx2_bx((const block_q8_0 *)x->b[c] + b, j + 4));
                    lo16[c] = j ? _mm256_add_epi16(lo16[c], pl) : pl;
                    hi16[c] = j ? _mm256_add_epi16(hi16[c], ph) : ph;
                }
            }
#pragma GCC unroll 4
            for (int c = 0; c < C; c++)
                is[q][c] = _mm256_add_epi32(_mm256_add_epi32(_mm256_madd_epi16(lo16[c], ones), _mm256_madd_epi16(hi16[c], ones)),
                                            _mm256_set1_epi32(-16 * x->s[c][b]));
        }
#pragma GCC unroll 2
        for (int q = 0; q < Q; q++) {
            const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(tp + 16 * (o0 + q))));
#pragma GCC unroll 4
            for (int c = 0; c < C; c++)
                acc[q][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(is[q][c]), _mm256_mul_ps(dw, _mm256_set1_ps(x->d[c][b])),
                                            acc[q][c]);
        }
    }
#pragma GCC unroll 2
    for (int q = 0; q < Q; q++)
#pragma GCC unroll 4
        for (int c = 0; c < C; c++) {
            float *yo = x->y[c] + 8 * q;
            r16_avx2_acc_store(yo, acc[q][c], full, lanes);
        }
}

T256 void mm_quant_r16_rows_avx2(const mm_call *c) {
    const void *w = c->w, *xq = c->xq;
    const int cols = c->cols, n = c->n, ldy = c->ldy, r0 = c->r0, r1 = c->r1;
    float *y = c->y;
    const int nb = cols / WICK_QK;
    const bool prefill = n > MM_STREAM_MAX_N;
    r16_avx2_walk16(q5_run, w, 16 * dtype_row_bytes(WICK_Q5_0, cols), nb, xq, sizeof(block_q8_0),
                    (const int32_t *)((const char *)xq + mm_xq_sums_offset(cols, n)),
                    (const float *)((const char *)xq + mm_xq_scales_offset(cols, n)), n, y, ldy, r0, r1,
                    prefill ? KC : DCHUNK, prefill ? RB : 16);
}

#endif
