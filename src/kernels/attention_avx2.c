/* attention_avx2.c — owns the AVX2 attention kernel: one (query row, head)
 * at a time over its tiles (KV blocks) with the online softmax of
 * attention.c, for x86-64 CPUs without AVX-512 and head dims that are
 * multiples of 8. Per tile:
 *   - scores 8 keys at a time: per key an 8-lane FMA chain over the dims,
 *     the 8 lanes summed by one fixed tree (hsum4_256), times the scale
 *     (and soft-capped, Gemma 2);
 *   - the tile's max, alpha = e^(m - m') (libm), the probabilities
 *     e^(s - m') 8 at a time (exp256), summed lane-wise;
 *   - acc = alpha·acc + Σ p·v: up to 8 dims-chunks of acc in registers per
 *     pass over the tile's V rows, each chunk taking the keys in order.
 * What a query computes depends only on its own q, keys and tiles, never on
 * the other rows of the call or the thread split: prefill and decode give
 * the same bits (batch invariance). Scoring keys through a dot product and
 * an axpy called per key, with libm's expf, makes attention a large share of
 * a prefill on AVX2. */
#if defined(__x86_64__) || defined(__i386__)

#include <immintrin.h>
#include <math.h>
#include <stdalign.h>
#include <stdbool.h>
#include <string.h>

#include "core/tensor.h"
#include "kernels/attention_impl.h"
#include "kernels/simd_math.h"

#define T256 __attribute__((target("avx2,fma,f16c")))
#define INLINE static inline __attribute__((always_inline))

/* Keys scored together (independent FMA chains). */
#define KEYS 8

/* Dims d..d+7 of a K or V row (p points at dim d). */
T256 INLINE __m256 load8(const bool f16, const char *p) {
    return f16 ? _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p)) : _mm256_loadu_ps((const float *)p);
}

/* [Σ P[0], Σ P[1], Σ P[2], Σ P[3]], every sum by the same tree:
 * x = low half + high half, then ((x0 + x1) + (x2 + x3)). */
T256 INLINE __m128 hsum4_256(const __m256 *P) {
    __m128 x[4];
#pragma GCC unroll 4
    for (int u = 0; u < 4; u++) x[u] = _mm_add_ps(_mm256_castps256_ps128(P[u]), _mm256_extractf128_ps(P[u], 1));
    return _mm_hadd_ps(_mm_hadd_ps(x[0], x[1]), _mm_hadd_ps(x[2], x[3]));
}

/* s[t] = scale · q·k_t for the cnt keys from kb (rows rs apart); s is
 * written up to cnt rounded up to KEYS (the extra lanes score key 0 again). */
T256 INLINE void score_tile(const bool f16, const float *q, int D, float scale, const char *kb, size_t rs, int cnt,
                            float *s) {
    const size_t esz = f16 ? 2 : 4;
    const __m128 vs = _mm_set1_ps(scale);
    for (int t0 = 0; t0 < cnt; t0 += KEYS) {
        const char *kr[KEYS];
        __m256 P[KEYS];
#pragma GCC unroll 8
        for (int u = 0; u < KEYS; u++) {
            kr[u] = kb + (size_t)(t0 + u < cnt ? t0 + u : 0) * rs;
            P[u] = _mm256_setzero_ps();
        }
        for (int d = 0; d < D; d += 8) {
            const __m256 qd = _mm256_loadu_ps(q + d);
#pragma GCC unroll 8
            for (int u = 0; u < KEYS; u++) P[u] = _mm256_fmadd_ps(qd, load8(f16, kr[u] + (size_t)d * esz), P[u]);
        }
#pragma GCC unroll 2
        for (int g = 0; g < KEYS; g += 4) _mm_storeu_ps(s + t0 + g, _mm_mul_ps(hsum4_256(P + g), vs));
    }
}

/* acc chunks j0..j0+NJ-1 (8 dims each) = alpha·acc + Σ_t p[t]·v_t over the
 * tile's cnt V rows from vb (rs apart). */
T256 INLINE void accumulate_v(const int NJ, const bool f16, float *acc, int j0, float alpha, const char *vb, size_t rs,
                              int cnt, const float *p) {
    const size_t esz = f16 ? 2 : 4;
    const __m256 va = _mm256_set1_ps(alpha);
    __m256 A[8];
#pragma GCC unroll 8
    for (int jj = 0; jj < NJ; jj++) A[jj] = _mm256_mul_ps(_mm256_load_ps(acc + 8 * (j0 + jj)), va);
    for (int t = 0; t < cnt; t++) {
        const __m256 w = _mm256_broadcast_ss(p + t);
        const char *vr = vb + (size_t)t * rs + (size_t)8 * j0 * esz;
#pragma GCC unroll 8
        for (int jj = 0; jj < NJ; jj++) A[jj] = _mm256_fmadd_ps(w, load8(f16, vr + (size_t)8 * jj * esz), A[jj]);
    }
#pragma GCC unroll 8
    for (int jj = 0; jj < NJ; jj++) _mm256_store_ps(acc + 8 * (j0 + jj), A[jj]);
}

T256 INLINE void attend_t(const bool f16, const attn_params *p, const float *q, int32_t pos, const attn_kv *kv,
                          int kvh, float *out) {
    const int D = p->head_dim, nD = D / 8, bs = kv->block_size;
    const size_t rs = kv->row_stride;
    alignas(32) float acc[ATTN_MAX];
    alignas(32) float s[ATTN_MAX + KEYS]; /* a tile's scores, then its probabilities */
    memset(acc, 0, (size_t)D * sizeof(float));
    float m = -INFINITY, l = 0.0f;
    for (int32_t p0 = attn_first_key(p, pos), end; p0 <= pos; p0 = end) {
        end = attn_tile_end(p0, pos, bs);
        const int cnt = end - p0;
        const char *kb = attn_kv_at(kv, kv->k, p0, kvh), *vb = attn_kv_at(kv, kv->v, p0, kvh);
        score_tile(f16, q, D, p->scale, kb, rs, cnt, s);
        if (p->softcap > 0.0f)
            for (int t = 0; t < cnt; t++) s[t] = p->softcap * tanhf(s[t] / p->softcap);
        float tmax = -INFINITY;
        for (int t = 0; t < cnt; t++) tmax = s[t] > tmax ? s[t] : tmax;
        const float m_new = tmax > m ? tmax : m;
        const float alpha = expf(m - m_new); /* 0 on the first tile (m = -inf) */
        const __m256 vm = _mm256_set1_ps(m_new);
        __m256 vsum = _mm256_setzero_ps();
        for (int t0 = 0; t0 < cnt; t0 += 8) {
            __m256 e = exp256(_mm256_sub_ps(_mm256_loadu_ps(s + t0), vm));
            if (cnt - t0 < 8) { /* lanes past the tile: 0 */
                const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
                e = _mm256_and_ps(e, _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(cnt - t0), idx)));
            }
            _mm256_storeu_ps(s + t0, e);
            vsum = _mm256_add_ps(vsum, e);
        }
        l = l * alpha + hsum256(vsum);
        int j = 0;
        for (; j + 8 <= nD; j += 8) accumulate_v(8, f16, acc, j, alpha, vb, rs, cnt, s);
        if (nD - j >= 4) accumulate_v(4, f16, acc, j, alpha, vb, rs, cnt, s), j += 4;
        if (nD - j >= 2) accumulate_v(2, f16, acc, j, alpha, vb, rs, cnt, s), j += 2;
        if (nD - j >= 1) accumulate_v(1, f16, acc, j, alpha, vb, rs, cnt, s);
        m = m_new;
    }
    const __m256 inv = _mm256_set1_ps(l > 0.0f ? 1.0f / l : 0.0f);
    for (int d = 0; d < D; d += 8) _mm256_storeu_ps(out + d, _mm256_mul_ps(_mm256_load_ps(acc + d), inv));
}

T256 void attend_one_avx2(const attn_params *p, const float *q, int32_t pos, const attn_kv *kv, int kvh, float *out) {
    if (kv->type == WICK_F16) attend_t(true, p, q, pos, kv, kvh, out);
    else attend_t(false, p, q, pos, kv, kvh, out);
}

#endif
