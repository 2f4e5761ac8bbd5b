/* attention.c — owns causal attention over a paged KV cache (see attention.h):
 * the tiled online-softmax kernel used by the forward pass and the plain
 * two-pass reference the tests compare it with.
 *
 * Tiling: one tile = the keys of one KV block that fall in the query's range.
 * Per (query row, head) the kernel keeps a running max m, a running sum l and
 * an accumulator acc[head_dim]; for each tile it computes the scores s_t,
 * m' = max(m, max_t s_t), rescales l and acc by exp(m - m'), then adds
 * exp(s_t - m') and exp(s_t - m')·v_t. out = acc / l at the end. Nothing is
 * allocated: the scores of a tile and acc live on the stack (block_size and
 * head_dim are at most ATTN_MAX). Work is split over (row, head) pairs. */
#include "kernels/attention.h"

#include <math.h>
#include <string.h>

#include "core/tensor.h"
#include "kernels/convert.h"
#include "kernels/cpu.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define WICK_X86 1
#else
#define WICK_X86 0
#endif

#define ATTN_MAX 256

/* ---- row primitives: dot(q, k_row) and acc += w * v_row, per KV type and ISA ---- */

static float dot_f32_scalar(const float *q, const float *k, int d) {
    float s = 0.0f;
    for (int i = 0; i < d; i++) s += q[i] * k[i];
    return s;
}

static float dot_f16_scalar(const float *q, const uint16_t *k, int d) {
    float s = 0.0f;
    for (int i = 0; i < d; i++) s += q[i] * fp16_to_f32(k[i]);
    return s;
}

static void axpy_f32_scalar(float *acc, float w, const float *v, int d) {
    for (int i = 0; i < d; i++) acc[i] += w * v[i];
}

static void axpy_f16_scalar(float *acc, float w, const uint16_t *v, int d) {
    for (int i = 0; i < d; i++) acc[i] += w * fp16_to_f32(v[i]);
}

#if WICK_X86
__attribute__((target("avx2,fma,f16c"))) static inline float hsum256(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

__attribute__((target("avx2,fma,f16c"))) static float dot_f32_avx2(const float *q, const float *k,
                                                                     int d) {
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    int i = 0;
    for (; i + 16 <= d; i += 16) {
        a0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), _mm256_loadu_ps(k + i), a0);
        a1 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i + 8), _mm256_loadu_ps(k + i + 8), a1);
    }
    for (; i + 8 <= d; i += 8) a0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), _mm256_loadu_ps(k + i), a0);
    float s = hsum256(_mm256_add_ps(a0, a1));
    for (; i < d; i++) s += q[i] * k[i];
    return s;
}

__attribute__((target("avx2,fma,f16c"))) static float dot_f16_avx2(const float *q,
                                                                     const uint16_t *k, int d) {
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    int i = 0;
    for (; i + 16 <= d; i += 16) {
        a0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i),
                             _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(k + i))), a0);
        a1 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i + 8),
                             _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(k + i + 8))), a1);
    }
    for (; i + 8 <= d; i += 8)
        a0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i),
                             _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(k + i))), a0);
    float s = hsum256(_mm256_add_ps(a0, a1));
    for (; i < d; i++) s += q[i] * fp16_to_f32(k[i]);
    return s;
}

__attribute__((target("avx2,fma,f16c"))) static void axpy_f32_avx2(float *acc, float w,
                                                                     const float *v, int d) {
    const __m256 vw = _mm256_set1_ps(w);
    int i = 0;
    for (; i + 8 <= d; i += 8)
        _mm256_storeu_ps(acc + i, _mm256_fmadd_ps(vw, _mm256_loadu_ps(v + i), _mm256_loadu_ps(acc + i)));
    for (; i < d; i++) acc[i] += w * v[i];
}

__attribute__((target("avx2,fma,f16c"))) static void axpy_f16_avx2(float *acc, float w,
                                                                     const uint16_t *v, int d) {
    const __m256 vw = _mm256_set1_ps(w);
    int i = 0;
    for (; i + 8 <= d; i += 8)
        _mm256_storeu_ps(acc + i,
                         _mm256_fmadd_ps(vw, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(v + i))),
                                         _mm256_loadu_ps(acc + i)));
    for (; i < d; i++) acc[i] += w * fp16_to_f32(v[i]);
}
#endif

typedef struct attn_ops {
    float (*dot_f32)(const float *, const float *, int);
    float (*dot_f16)(const float *, const uint16_t *, int);
    void (*axpy_f32)(float *, float, const float *, int);
    void (*axpy_f16)(float *, float, const uint16_t *, int);
} attn_ops;

static attn_ops pick_ops(void) {
    attn_ops o = {dot_f32_scalar, dot_f16_scalar, axpy_f32_scalar, axpy_f16_scalar};
#if WICK_X86
    if (cpu_isa_active() >= ISA_AVX2) {
        o.dot_f32 = dot_f32_avx2;
        o.dot_f16 = dot_f16_avx2;
        o.axpy_f32 = axpy_f32_avx2;
        o.axpy_f16 = axpy_f16_avx2;
    }
#endif
    return o;
}

/* ---- the tiled kernel ---- */

static inline int64_t kv_row(const attn_kv *kv, int32_t p) {
    return (int64_t)kv->blocks[p / kv->block_size] * kv->block_size + p % kv->block_size;
}

/* One (query row, head): attend q (head_dim floats) over keys [start, pos] of KV head kvh. */
static void attend_one(const attn_ops *o, const attn_params *p, const float *q, int32_t pos,
                       const attn_kv *kv, int kvh, float *out) {
    const int D = p->head_dim, bs = kv->block_size;
    const bool f16 = kv->type == WICK_F16;
    const size_t esz = f16 ? 2 : 4;
    const char *kb = (const char *)kv->k + (size_t)kvh * D * esz;
    const char *vb = (const char *)kv->v + (size_t)kvh * D * esz;
    const size_t row_bytes = (size_t)kv->row_elems * esz;

    float acc[ATTN_MAX], s[ATTN_MAX];
    memset(acc, 0, (size_t)D * sizeof(float));
    float m = -INFINITY, l = 0.0f;
    int32_t p0 = p->window > 0 && pos - p->window + 1 > 0 ? pos - p->window + 1 : 0;
    while (p0 <= pos) {
        const int32_t blk_end = (p0 / bs + 1) * bs;
        const int32_t end = blk_end < pos + 1 ? blk_end : pos + 1;
        const int cnt = end - p0;
        const int64_t r0 = kv_row(kv, p0); /* rows of one tile are consecutive */
        float tmax = -INFINITY;
        for (int t = 0; t < cnt; t++) {
            const char *kr = kb + (size_t)(r0 + t) * row_bytes;
            float sc = f16 ? o->dot_f16(q, (const uint16_t *)kr, D) : o->dot_f32(q, (const float *)kr, D);
            sc *= p->scale;
            s[t] = sc;
            if (sc > tmax) tmax = sc;
        }
        const float m_new = tmax > m ? tmax : m;
        const float alpha = expf(m - m_new); /* 0 on the first tile (m = -inf) */
        if (alpha != 1.0f) {
            l *= alpha;
            for (int i = 0; i < D; i++) acc[i] *= alpha;
        }
        for (int t = 0; t < cnt; t++) {
            const float e = expf(s[t] - m_new);
            l += e;
            const char *vr = vb + (size_t)(r0 + t) * row_bytes;
            if (f16) o->axpy_f16(acc, e, (const uint16_t *)vr, D);
            else o->axpy_f32(acc, e, (const float *)vr, D);
        }
        m = m_new;
        p0 = end;
    }
    const float inv = l > 0.0f ? 1.0f / l : 0.0f;
    for (int i = 0; i < D; i++) out[i] = acc[i] * inv;
}

typedef struct attn_job {
    const attn_params *p;
    const float *q;
    int n_q;
    const int32_t *pos;
    const attn_kv *kv;
    float *out;
    attn_ops ops;
} attn_job;

static void attn_task(void *arg, int ith, int nth) {
    const attn_job *j = arg;
    const attn_params *p = j->p;
    const int group = p->n_heads / p->n_kv_heads;
    int64_t lo, hi;
    pool_split((int64_t)j->n_q * p->n_heads, ith, nth, 1, &lo, &hi);
    for (int64_t w = lo; w < hi; w++) {
        const int i = (int)(w / p->n_heads), h = (int)(w % p->n_heads);
        const int64_t off = ((int64_t)i * p->n_heads + h) * p->head_dim;
        attend_one(&j->ops, p, j->q + off, j->pos[i], j->kv, h / group, j->out + off);
    }
}

void attention(wick_pool *pool, const attn_params *p, const float *q, int n_q,
               const int32_t *pos, const attn_kv *kv, float *out) {
    if (n_q <= 0) return;
    attn_job j = {p, q, n_q, pos, kv, out, pick_ops()};
    if ((int64_t)n_q * p->n_heads < 2) pool = NULL;
    pool_run(pool, attn_task, &j);
}

/* ---- reference: scores, max, sum, weighted sum; double accumulation ---- */

static double ref_load(const attn_kv *kv, int64_t row, int idx) {
    if (kv->type == WICK_F16)
        return fp16_to_f32(((const uint16_t *)kv->k)[row * kv->row_elems + idx]);
    return ((const float *)kv->k)[row * kv->row_elems + idx];
}

static double ref_load_v(const attn_kv *kv, int64_t row, int idx) {
    if (kv->type == WICK_F16)
        return fp16_to_f32(((const uint16_t *)kv->v)[row * kv->row_elems + idx]);
    return ((const float *)kv->v)[row * kv->row_elems + idx];
}

static double ref_score(const attn_params *p, const float *q, const attn_kv *kv, int kvh,
                        int32_t pk) {
    const int64_t row = kv_row(kv, pk);
    double s = 0.0;
    for (int d = 0; d < p->head_dim; d++) s += (double)q[d] * ref_load(kv, row, kvh * p->head_dim + d);
    return s * p->scale;
}

void attention_reference(const attn_params *p, const float *q, int n_q, const int32_t *pos,
                         const attn_kv *kv, float *out) {
    const int D = p->head_dim, group = p->n_heads / p->n_kv_heads;
    double acc[ATTN_MAX];
    for (int i = 0; i < n_q; i++) {
        const int32_t start = p->window > 0 && pos[i] - p->window + 1 > 0 ? pos[i] - p->window + 1 : 0;
        for (int h = 0; h < p->n_heads; h++) {
            const float *qh = q + ((int64_t)i * p->n_heads + h) * D;
            float *oh = out + ((int64_t)i * p->n_heads + h) * D;
            const int kvh = h / group;
            double m = -INFINITY;
            for (int32_t pk = start; pk <= pos[i]; pk++) {
                double s = ref_score(p, qh, kv, kvh, pk);
                if (s > m) m = s;
            }
            double l = 0.0;
            for (int d = 0; d < D; d++) acc[d] = 0.0;
            for (int32_t pk = start; pk <= pos[i]; pk++) {
                const double e = exp(ref_score(p, qh, kv, kvh, pk) - m);
                l += e;
                const int64_t row = kv_row(kv, pk);
                for (int d = 0; d < D; d++) acc[d] += e * ref_load_v(kv, row, kvh * D + d);
            }
            for (int d = 0; d < D; d++) oh[d] = (float)(acc[d] / l);
        }
    }
}
