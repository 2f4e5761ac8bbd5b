/* attention.c — owns causal attention over a paged KV cache (see attention.h):
 * the work split, the tiled online-softmax kernels (the AVX-512 batched one
 * here, the AVX2 one in attention_avx2.c, and attend_one below for the
 * scalar path and head dims that are not multiples of 8) and the plain
 * two-pass reference the tests compare them with.
 *
 * Tiling: one tile = the keys of one KV block that fall in the query's range.
 * Per (query row, head) the kernel keeps a running max m, a running sum l and
 * an accumulator acc[head_dim]; for each tile it computes the scores s_t,
 * m' = max(m, max_t s_t), rescales l and acc by exp(m - m'), then adds
 * exp(s_t - m') and exp(s_t - m')·v_t. out = acc / l at the end. Nothing is
 * allocated: the scores of a tile and acc live on the stack (block_size and
 * head_dim are at most ATTN_MAX). Work is split over (row, head) pairs.
 * Soft-capping (Gemma 2) maps each scaled score through softcap·tanh(s/softcap)
 * before the softmax, elementwise, so it changes nothing of the tiling. */
#include "kernels/attention.h"

#include <math.h>
#include <stdalign.h>
#include <stdint.h>
#include <string.h>

#include "core/tensor.h"
#include "kernels/attention_impl.h"
#include "kernels/convert.h"
#include "kernels/cpu.h"
#include "kernels/simd_math.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define WICK_X86 1
#else
#define WICK_X86 0
#endif

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

static attn_ops pick_ops(cpu_isa isa) {
    attn_ops o = {dot_f32_scalar, dot_f16_scalar, axpy_f32_scalar, axpy_f16_scalar};
#if WICK_X86
    if (isa >= ISA_AVX2) {
        o.dot_f32 = dot_f32_avx2;
        o.dot_f16 = dot_f16_avx2;
        o.axpy_f32 = axpy_f32_avx2;
        o.axpy_f16 = axpy_f16_avx2;
    }
#endif
    return o;
}

/* ---- the tiled kernel ---- */

/* One (query row, head): attend q (head_dim floats) over keys [start, pos] of KV head kvh. */
static void attend_one(const attn_ops *o, const attn_params *p, const float *q, int32_t pos,
                       const attn_kv *kv, int kvh, float *out) {
    const int D = p->head_dim, bs = kv->block_size;
    const bool f16 = kv->type == WICK_F16;
    const size_t rs = kv->row_stride;

    float acc[ATTN_MAX], s[ATTN_MAX];
    memset(acc, 0, (size_t)D * sizeof(float));
    float m = -INFINITY, l = 0.0f;
    int32_t p0 = attn_first_key(p, pos);
    while (p0 <= pos) {
        const int32_t end = attn_tile_end(p0, pos, bs);
        const int cnt = end - p0;
        /* a tile's positions are rs apart */
        const char *kb = attn_kv_at(kv, kv->k, p0, kvh), *vb = attn_kv_at(kv, kv->v, p0, kvh);
        float tmax = -INFINITY;
        for (int t = 0; t < cnt; t++) {
            const char *kr = kb + (size_t)t * rs;
            float sc = f16 ? o->dot_f16(q, (const uint16_t *)kr, D) : o->dot_f32(q, (const float *)kr, D);
            sc *= p->scale;
            if (p->softcap > 0.0f) sc = p->softcap * tanhf(sc / p->softcap);
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
            const char *vr = vb + (size_t)t * rs;
            if (f16) o->axpy_f16(acc, e, (const uint16_t *)vr, D);
            else o->axpy_f32(acc, e, (const float *)vr, D);
        }
        m = m_new;
        p0 = end;
    }
    const float inv = l > 0.0f ? 1.0f / l : 0.0f;
    for (int i = 0; i < D; i++) out[i] = acc[i] * inv;
}

/* ---- the batched AVX-512 kernel ----
 *
 * Up to 16 query vectors that read the same KV head (the heads of a GQA group
 * and/or several query rows) go through each tile together, so every K and V
 * row is loaded once per batch. Each score is a dot product: 16-lane partial
 * sums over the dims, 16 keys' sums packed into one vector by a fixed
 * reduction tree (hsum4x, hsum16), up to SMALL_M query vectors at a time. The
 * online softmax state (m, l) is per query vector; p = exp(s - m') is
 * computed 16 lanes at a time with masking for keys outside a query's range.
 * Needs head_dim % 8 == 0: an odd multiple of 8 loads its last 16-dim chunk
 * half, the other lanes zero (so that a head_dim of 8, stories260K's, does
 * not take attend_one's scalar-width rows and libm expf). With at most SMALL_M vectors (decode: one row's GQA group) V is
 * accumulated in registers over up to 16 dims-chunks per pass, so each V row
 * is read once. The next tile's K/V are prefetched while a tile is computed
 * (with spread prefetching also the tile's own K ahead and V while it is
 * scored, and during a batch's last tile the next batch's first keys).
 *
 * Batch invariance: a query vector's result is bit-identical whatever the
 * other vectors of its batch (how many rows the call has, how the work is
 * split over threads): its scores, its tiles (KV blocks), the lanes its
 * probabilities are summed in (key offset in the block mod 16) and the order
 * of its V accumulation are its own; keys outside its range contribute exact
 * zeros (alpha = 1, p = 0). An earlier version scored more than 4 vectors
 * with transposed keys (a different summation order than the dot products
 * decode used) and started the first tile at the batch's lowest position. */

#if WICK_X86
#define AT512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,f16c")))
#define AINLINE static inline __attribute__((always_inline))
#define ATTN_BATCH 16

/* Up to SMALL_M query vectors (decode: one row, a GQA group of 1-4 heads)
 * score each key as a dot product: 16-lane partial sums per key, then a
 * reduction tree packs 16 keys' sums into one vector (hsum4x, hsum16) —
 * cheaper than transposing the keys when few queries share them. */
#define SMALL_M 4

/* How far ahead of the keys being scored their K rows are prefetched (keys;
 * a multiple of 16), with spread (non-temporal style) prefetching. */
#define ATTN_K_AHEAD 32

/* How many of the next batch's first keys the last tile of a batch prefetches. */
#define ATTN_NEXT_KEYS 32

/* Dims d..d+15 of a row of head_dim D: all 16, or with `half` (D an odd
 * multiple of 8: stories260K's 8) the low 8 of the last chunk, the other
 * lanes zero. `half` is a compile-time argument, so head dims that are
 * multiples of 16 keep plain loads. */
AT512 AINLINE __mmask16 dims16(const bool half, int D, int d) {
    return !half || D - d >= 16 ? (__mmask16)0xffff : (__mmask16)0x00ff;
}

AT512 AINLINE __m512 load16(const bool f16, const bool half, const char *p, __mmask16 k) {
    if (!half) return f16 ? _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p)) : _mm512_loadu_ps((const float *)p);
    if (f16) return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(k, p));
    return _mm512_maskz_loadu_ps(k, (const float *)p);
}

/* The first keys (K and V rows, rs apart) of the batch a thread runs after
 * this one, prefetched during this batch's last tile: a call's first tile is
 * otherwise read cold (decode: every (sequence, KV head) is one batch). */
typedef struct attn_next {
    const char *k, *v; /* NULL: none */
    size_t rs;
    int cnt;
} attn_next;

typedef struct attn_batch {
    int M;                        /* real query vectors, <= ATTN_BATCH */
    const float *q[ATTN_BATCH];   /* head_dim floats each */
    float *out[ATTN_BATCH];
    int32_t start[ATTN_BATCH], end[ATTN_BATCH]; /* key positions [start, end] */
    attn_next next; /* the first keys of the batch the thread runs next */
} attn_batch;

typedef struct attn_scratch {
    alignas(64) float qs[ATTN_BATCH][ATTN_MAX];      /* q * scale */
    alignas(64) float acc[ATTN_BATCH][ATTN_MAX];
    alignas(64) float sc[ATTN_BATCH][ATTN_MAX + 16]; /* scores, then probabilities, of one tile */
} attn_scratch;

/* Scores of keys t0..t0+nt-1 of a tile (kb, rows rs apart) for the G <= SMALL_M
 * query vectors m0.. into w->sc: per key and query a 16-lane FMA chain over
 * the dims, then the fixed reduction tree of hsum4x/hsum16. Every query
 * vector's scores are computed this way whatever the number of vectors in the
 * batch (batch invariance); 4 keys × G queries are independent FMA chains. */
AT512 AINLINE void score16(const int G, const bool f16, const bool half, attn_scratch *w, int m0, const char *kb,
                           size_t rs, int t0, int nt, int D) {
    const size_t esz = f16 ? 2 : 4;
    __m512 R[SMALL_M][4];
#pragma GCC unroll 4
    for (int g = 0; g < 4; g++) {
        __m512 P[SMALL_M][4];
        const char *kr[4];
#pragma GCC unroll 4
        for (int u = 0; u < 4; u++) {
            const int t = 4 * g + u;
            kr[u] = kb + (size_t)(t0 + (t < nt ? t : 0)) * rs;
#pragma GCC unroll 4
            for (int m = 0; m < G; m++) P[m][u] = _mm512_setzero_ps();
        }
        for (int d0 = 0; d0 < D; d0 += 16) {
            const __mmask16 km = dims16(half, D, d0);
            __m512 qd[SMALL_M];
#pragma GCC unroll 4
            for (int m = 0; m < G; m++) qd[m] = _mm512_load_ps(&w->qs[m0 + m][d0]);
#pragma GCC unroll 4
            for (int u = 0; u < 4; u++) {
                const __m512 kd = load16(f16, half, kr[u] + d0 * esz, km);
#pragma GCC unroll 4
                for (int m = 0; m < G; m++) P[m][u] = _mm512_fmadd_ps(qd[m], kd, P[m][u]);
            }
        }
#pragma GCC unroll 4
        for (int m = 0; m < G; m++) R[m][g] = hsum4x(P[m]);
    }
#pragma GCC unroll 4
    for (int m = 0; m < G; m++) _mm512_storeu_ps(&w->sc[m0 + m][t0], hsum16(R[m]));
}

AT512 AINLINE void attend_batch_t(const int MM, const bool f16, const bool half, const bool spread,
                                  const attn_params *p, const attn_kv *kv, int kvh, const attn_batch *b,
                                  attn_scratch *w) {
    const int D = p->head_dim, bs = kv->block_size, nD = (D + 15) / 16;
    const size_t esz = f16 ? 2 : 4, rs = kv->row_stride;
    float mrun[ATTN_BATCH], lrun[ATTN_BATCH], alpha[ATTN_BATCH];
    int32_t st[ATTN_BATCH], en[ATTN_BATCH];
    int32_t lo = INT32_MAX, hi = -1;
    const __m512 vscale = _mm512_set1_ps(p->scale);
    for (int m = 0; m < MM; m++) {
        const int src = m < b->M ? m : b->M - 1; /* padding repeats the last vector */
        st[m] = b->start[src], en[m] = b->end[src];
        if (st[m] < lo) lo = st[m];
        if (en[m] > hi) hi = en[m];
        for (int d = 0; d < D; d += 16) {
            const __m512 qv = half ? _mm512_maskz_loadu_ps(dims16(half, D, d), b->q[src] + d) : _mm512_loadu_ps(b->q[src] + d);
            _mm512_store_ps(&w->qs[m][d], _mm512_mul_ps(qv, vscale));
            _mm512_store_ps(&w->acc[m][d], _mm512_setzero_ps());
        }
        mrun[m] = -INFINITY, lrun[m] = 0.0f;
    }
    const int GM = MM < SMALL_M ? MM : SMALL_M;
    /* Tiles are KV blocks, the first one starting at lo rounded down to a
     * multiple of 16 within its block: a key's lane in the 16-key chunks
     * (which the softmax sum accumulates lane-wise) is then its offset in
     * its block mod 16, whatever the other vectors of the batch (batch
     * invariance: with a sliding window lo depends on them). Keys before lo
     * are masked out of every vector and skipped in the V pass. */
    for (int32_t p0 = attn_tile_first(lo, bs), tlo = lo - p0; p0 <= hi; tlo = 0) {
        const int32_t end = attn_tile_end(p0, hi, bs);
        const int cnt = end - p0;
        const char *kb = attn_kv_at(kv, kv->k, p0, kvh), *vb = attn_kv_at(kv, kv->v, p0, kvh);
        /* The next tile's K and V of this head, fetched while this one is
         * computed: with non-temporal prefetching (kernel_tuning.prefetch), key
         * by key into L1, spread over the first pass over this tile's V (a
         * burst into L2 overflows the miss queues there); else all at once
         * into L2. */
        const char *kn = NULL, *vn = NULL;
        int ncnt = 0;
        if (end <= hi) {
            kn = attn_kv_at(kv, kv->k, end, kvh), vn = attn_kv_at(kv, kv->v, end, kvh);
            ncnt = hi + 1 - end < bs ? hi + 1 - end : bs;
        } else if (spread && b->next.k && b->next.rs == rs) {
            kn = b->next.k, vn = b->next.v, ncnt = b->next.cnt;
        }
        if (!spread) {
            for (int t = 0; t < ncnt; t++)
                for (size_t o = 0; o < (size_t)D * esz; o += 64) {
                    _mm_prefetch(kn + (size_t)t * rs + o, _MM_HINT_T1);
                    _mm_prefetch(vn + (size_t)t * rs + o, _MM_HINT_T1);
                }
            ncnt = 0;
        }
        /* scores S[m][t] for t < cnt, 16 keys at a time, GM query vectors at a time */
        for (int t0 = 0; t0 < cnt; t0 += 16) {
            const int nt = cnt - t0 < 16 ? cnt - t0 : 16;
            /* With spread prefetching, also within the tile (the next-tile
             * prefetch above misses a call's first tile, and at decode depths
             * of a few hundred keys most tiles are first ones): K rows
             * ATTN_K_AHEAD keys ahead of the 16 being scored, and the V rows of
             * those 16, into L1; and the next batch's first keys (attn_next). */
            if (spread) {
                for (int t = t0 ? t0 + ATTN_K_AHEAD : 16; t < t0 + ATTN_K_AHEAD + 16 && t < cnt; t++)
                    for (size_t o = 0; o < (size_t)D * esz; o += 64) _mm_prefetch(kb + (size_t)t * rs + o, _MM_HINT_T0);
                for (int t = t0; t < t0 + nt; t++)
                    for (size_t o = 0; o < (size_t)D * esz; o += 64) _mm_prefetch(vb + (size_t)t * rs + o, _MM_HINT_T0);
            }
            for (int m0 = 0; m0 + GM <= MM; m0 += GM) score16(GM, f16, half, w, m0, kb, rs, t0, nt, D);
            if (MM % GM) score16(MM % GM, f16, half, w, MM - MM % GM, kb, rs, t0, nt, D);
        }
        /* soft-capping: softcap·tanh(s/softcap), elementwise (lanes past cnt are never read) */
        if (p->softcap > 0.0f) {
            const __m512 vc = _mm512_set1_ps(p->softcap), vinv = _mm512_set1_ps(1.0f / p->softcap);
            for (int m = 0; m < MM; m++)
                for (int t0 = 0; t0 < cnt; t0 += 16)
                    _mm512_storeu_ps(&w->sc[m][t0], _mm512_mul_ps(vc, tanh512(_mm512_mul_ps(_mm512_loadu_ps(&w->sc[m][t0]), vinv))));
        }
        /* online softmax update per query vector */
        for (int m = 0; m < MM; m++) {
            const int a = (st[m] > p0 ? st[m] : p0) - p0;
            const int z = (en[m] < end - 1 ? en[m] : end - 1) - p0; /* inclusive */
            if (z < a) { /* no key of this tile in range */
                alpha[m] = 1.0f;
                for (int t0 = 0; t0 < cnt; t0 += 16) _mm512_storeu_ps(&w->sc[m][t0], _mm512_setzero_ps());
                continue;
            }
            __m512 vmax = _mm512_set1_ps(-INFINITY);
            for (int t0 = 0; t0 < cnt; t0 += 16) {
                const int la = a - t0 > 0 ? a - t0 : 0, lz = z - t0 < 15 ? z - t0 : 15;
                if (lz < la) continue;
                const __mmask16 k = (__mmask16)(((2u << lz) - 1) & ~((1u << la) - 1));
                vmax = _mm512_mask_max_ps(vmax, k, vmax, _mm512_loadu_ps(&w->sc[m][t0]));
            }
            const float tmax = _mm512_reduce_max_ps(vmax);
            const float m_new = tmax > mrun[m] ? tmax : mrun[m];
            alpha[m] = expf(mrun[m] - m_new);
            const __m512 vm = _mm512_set1_ps(m_new);
            __m512 vsum = _mm512_setzero_ps();
            for (int t0 = 0; t0 < cnt; t0 += 16) {
                const int la = a - t0 > 0 ? a - t0 : 0, lz = z - t0 < 15 ? z - t0 : 15;
                const __mmask16 k = lz < la ? 0 : (__mmask16)(((2u << lz) - 1) & ~((1u << la) - 1));
                const __m512 e = _mm512_maskz_mov_ps(k, exp512(_mm512_sub_ps(_mm512_loadu_ps(&w->sc[m][t0]), vm)));
                _mm512_storeu_ps(&w->sc[m][t0], e);
                vsum = _mm512_add_ps(vsum, e);
            }
            lrun[m] = lrun[m] * alpha[m] + _mm512_reduce_add_ps(vsum);
            mrun[m] = m_new;
        }
        /* acc = alpha·acc + Σ_t p_t·v_t. Few query vectors: JG 16-dim chunks
         * per pass over the keys, every V row read once per pass, JG·MM
         * independent FMA chains. More vectors: below. */
        const int JG = MM <= SMALL_M ? 16 / MM : 1;
        for (int j0 = 0; j0 < nD && MM <= SMALL_M; j0 += JG) {
            const int nj = nD - j0 < JG ? nD - j0 : JG;
            __m512 A[SMALL_M][16];
#pragma GCC unroll 16
            for (int jj = 0; jj < JG; jj++)
#pragma GCC unroll 4
                for (int m = 0; m < MM; m++)
                    A[m][jj] = jj < nj ? _mm512_mul_ps(_mm512_load_ps(&w->acc[m][16 * (j0 + jj)]), _mm512_set1_ps(alpha[m]))
                                       : _mm512_setzero_ps();
            for (int t = tlo; t < cnt; t++) {
                const char *vr = vb + (size_t)t * rs + 16 * j0 * esz;
                if (t < ncnt && j0 == 0) /* key t of the next tile */
                    for (size_t o = 0; o < (size_t)D * esz; o += 64) {
                        _mm_prefetch(kn + (size_t)t * rs + o, _MM_HINT_NTA);
                        _mm_prefetch(vn + (size_t)t * rs + o, _MM_HINT_NTA);
                    }
#pragma GCC unroll 16
                for (int jj = 0; jj < JG; jj++) {
                    if (jj >= nj) break;
                    const __m512 v = load16(f16, half, vr + 16 * jj * esz, dims16(half, D, 16 * (j0 + jj)));
#pragma GCC unroll 4
                    for (int m = 0; m < MM; m++) A[m][jj] = _mm512_fmadd_ps(_mm512_set1_ps(w->sc[m][t]), v, A[m][jj]);
                }
            }
#pragma GCC unroll 16
            for (int jj = 0; jj < JG; jj++)
#pragma GCC unroll 4
                for (int m = 0; m < MM; m++)
                    if (jj < nj) _mm512_store_ps(&w->acc[m][16 * (j0 + jj)], A[m][jj]);
        }
        /* More query vectors: groups of up to SMALL_M, each taking 4 16-dim
         * chunks per pass over the keys (16 accumulators), so that a pass
         * reads 64 contiguous elements of each V row (whole rows for head_dim
         * 64), not one 16-element chunk of every row per pass, which left
         * each pass waiting on a line of every row. (All 7 vectors of a
         * 7-head group at once, 28 accumulators, spill registers.) The same
         * values: each accumulator still takes its keys in order. */
        for (int m0 = 0; m0 < MM && MM > SMALL_M; m0 += SMALL_M) {
            const int G = MM - m0 < SMALL_M ? MM - m0 : SMALL_M;
            for (int j0 = 0; j0 < nD; j0 += 4) {
                const int nj = nD - j0 < 4 ? nD - j0 : 4;
                __m512 A[SMALL_M][4];
#pragma GCC unroll 4
                for (int jj = 0; jj < 4; jj++)
#pragma GCC unroll 4
                    for (int m = 0; m < SMALL_M; m++)
                        A[m][jj] = m < G && jj < nj ? _mm512_mul_ps(_mm512_load_ps(&w->acc[m0 + m][16 * (j0 + jj)]), _mm512_set1_ps(alpha[m0 + m]))
                                                    : _mm512_setzero_ps();
                for (int t = tlo; t < cnt; t++) {
                    if (t < ncnt && j0 == 0 && m0 == 0) /* key t of the next tile */
                        for (size_t o = 0; o < (size_t)D * esz; o += 64) {
                            _mm_prefetch(kn + (size_t)t * rs + o, _MM_HINT_NTA);
                            _mm_prefetch(vn + (size_t)t * rs + o, _MM_HINT_NTA);
                        }
                    const char *vr = vb + (size_t)t * rs + 16 * j0 * esz;
#pragma GCC unroll 4
                    for (int jj = 0; jj < 4; jj++) {
                        if (jj >= nj) break;
                        const __m512 v = load16(f16, half, vr + 16 * jj * esz, dims16(half, D, 16 * (j0 + jj)));
#pragma GCC unroll 4
                        for (int m = 0; m < G; m++) A[m][jj] = _mm512_fmadd_ps(_mm512_set1_ps(w->sc[m0 + m][t]), v, A[m][jj]);
                    }
                }
#pragma GCC unroll 4
                for (int jj = 0; jj < 4; jj++)
#pragma GCC unroll 4
                    for (int m = 0; m < G; m++)
                        if (jj < nj) _mm512_store_ps(&w->acc[m0 + m][16 * (j0 + jj)], A[m][jj]);
            }
        }
        p0 = end;
    }
    for (int m = 0; m < b->M && m < MM; m++) {
        const __m512 inv = _mm512_set1_ps(lrun[m] > 0.0f ? 1.0f / lrun[m] : 0.0f);
        for (int d = 0; d < D; d += 16) {
            const __m512 o = _mm512_mul_ps(_mm512_load_ps(&w->acc[m][d]), inv);
            if (half) _mm512_mask_storeu_ps(b->out[m] + d, dims16(half, D, d), o);
            else _mm512_storeu_ps(b->out[m] + d, o);
        }
    }
}

AT512 static void attend_batch_avx512(const attn_params *p, const attn_kv *kv, int kvh,
                                      const attn_batch *b, bool spread) {
    attn_scratch w;
    const bool f16 = kv->type == WICK_F16;
    /* Batches are padded to MM vectors (the last one repeated); the sizes
     * follow the common batches, so that little is padded: 10 serves a
     * speculative verification's 5 rows of 2-head GQA groups (Qwen3), 7 a
     * decode row of Qwen2.5's 7-head groups. */
    const bool half = p->head_dim % 16 != 0;
#define ATTN_CASE(MM)                                                               \
    if (f16 && half) attend_batch_t(MM, true, true, spread, p, kv, kvh, b, &w);            \
    else if (f16) attend_batch_t(MM, true, false, spread, p, kv, kvh, b, &w);              \
    else if (half) attend_batch_t(MM, false, true, spread, p, kv, kvh, b, &w);             \
    else attend_batch_t(MM, false, false, spread, p, kv, kvh, b, &w);
    if (b->M <= 1) { ATTN_CASE(1) }
    else if (b->M <= 2) { ATTN_CASE(2) }
    else if (b->M <= 4) { ATTN_CASE(4) }
    else if (b->M <= 7) { ATTN_CASE(7) }
    else if (b->M <= 8) { ATTN_CASE(8) }
    else if (b->M <= 10) { ATTN_CASE(10) }
    else if (b->M <= 12) { ATTN_CASE(12) }
    else { ATTN_CASE(16) }
#undef ATTN_CASE
}
#endif

/* ---- work split ----
 * Work items are (query row, head) pairs, ordered (KV head, row, head within
 * the group) so that consecutive items read the same K/V; each thread takes a
 * contiguous range and, on AVX-512, runs it in batches of up to 16 items that
 * share a KV head, each batch formed before the previous one runs so that
 * its first keys can be prefetched (attn_next). */

/* Which kernel a call's items take. */
typedef enum attn_kernel {
    ATTN_ONE,        /* attend_one through the ops table (scalar or the ISA's vector ops) */
    ATTN_ONE_AVX2,   /* AVX2 with head_dim % 8 == 0: attend_one_avx2 */
    ATTN_BATCH_AVX512 /* AVX-512 with head_dim % 8 == 0: attend_batch_avx512 */
} attn_kernel;

typedef struct attn_job {
    const attn_params *p;
    const float *q;
    int n_q;
    const int32_t *pos;
    const attn_kv *kv;
    float *out;
    attn_ops ops;
    attn_kernel kernel;
    bool spread; /* non-temporal (spread) prefetching: kernel_tuning.prefetch == PREFETCH_NTA */
} attn_job;

#if WICK_X86
/* Fills b with the items from w on that share w's KV head (at most
 * ATTN_BATCH, before hi); returns the item after them. */
static int64_t attn_fill(const attn_job *j, int64_t w, int64_t hi, attn_batch *b, int *kvh_out) {
    const attn_params *p = j->p;
    const int group = p->n_heads / p->n_kv_heads;
    const int64_t per_kvh = (int64_t)j->n_q * group;
    const int kvh = (int)(w / per_kvh);
    const int64_t stop = (kvh + 1) * per_kvh < hi ? (kvh + 1) * per_kvh : hi;
    b->M = 0;
    b->next.k = NULL;
    for (; w < stop && b->M < ATTN_BATCH; w++) {
        const int64_t e = w % per_kvh;
        const int ii = (int)(e / group), hh = kvh * group + (int)(e % group);
        const int64_t o = ((int64_t)ii * p->n_heads + hh) * p->head_dim;
        const int32_t pos = j->pos[ii];
        b->q[b->M] = j->q + o;
        b->out[b->M] = j->out + o;
        b->end[b->M] = pos;
        b->start[b->M] = attn_first_key(p, pos);
        b->M++;
    }
    *kvh_out = kvh;
    return w;
}

/* The first keys of batch b (its first tile, as attend_batch_t starts it), at
 * most ATTN_NEXT_KEYS of them. */
static attn_next attn_next_of(const attn_kv *kv, int kvh, const attn_batch *b) {
    int32_t lo = INT32_MAX, hi = -1;
    for (int m = 0; m < b->M; m++) {
        if (b->start[m] < lo) lo = b->start[m];
        if (b->end[m] > hi) hi = b->end[m];
    }
    const int bs = kv->block_size;
    const int32_t p0 = attn_tile_first(lo, bs), end = attn_tile_end(p0, hi, bs);
    attn_next n = {attn_kv_at(kv, kv->k, p0, kvh), attn_kv_at(kv, kv->v, p0, kvh), kv->row_stride,
                   end - p0 < ATTN_NEXT_KEYS ? end - p0 : ATTN_NEXT_KEYS};
    return n;
}
#endif

/* Work items [lo, hi) of one call (see above); `after` (or NULL) is the
 * batch the thread runs after them, from the next call of attention_multi. */
static void attn_range(const attn_job *j, int64_t lo, int64_t hi, const attn_next *after) {
    const attn_params *p = j->p;
    if (lo >= hi) return;
#if WICK_X86
    if (j->kernel == ATTN_BATCH_AVX512) {
        attn_batch cur, nxt;
        int kc, kn;
        int64_t w = attn_fill(j, lo, hi, &cur, &kc);
        for (;;) {
            const bool more = w < hi;
            if (more) {
                w = attn_fill(j, w, hi, &nxt, &kn);
                cur.next = attn_next_of(j->kv, kn, &nxt);
            } else if (after) {
                cur.next = *after;
            }
            attend_batch_avx512(p, j->kv, kc, &cur, j->spread);
            if (!more) return;
            cur = nxt;
            kc = kn;
        }
    }
#else
    (void)after;
#endif
    const int group = p->n_heads / p->n_kv_heads;
    const int64_t per_kvh = (int64_t)j->n_q * group;
    for (int64_t w = lo; w < hi; w++) {
        const int kvh = (int)(w / per_kvh);
        const int64_t in_kvh = w % per_kvh;
        const int i = (int)(in_kvh / group), h = kvh * group + (int)(in_kvh % group);
        const int64_t off = ((int64_t)i * p->n_heads + h) * p->head_dim;
#if WICK_X86
        if (j->kernel == ATTN_ONE_AVX2) {
            attend_one_avx2(p, j->q + off, j->pos[i], j->kv, kvh, j->out + off);
            continue;
        }
#endif
        attend_one(&j->ops, p, j->q + off, j->pos[i], j->kv, kvh, j->out + off);
    }
}

static int64_t attn_items(const attn_job *j) { return (int64_t)j->n_q * j->p->n_heads; }

static void attn_task(void *arg, int ith, int nth) {
    const attn_job *j = arg;
    int64_t lo, hi;
    pool_split(attn_items(j), ith, nth, 1, &lo, &hi);
    attn_range(j, lo, hi, NULL);
}

static attn_job attn_make(const kernel_tuning *kt, const attn_params *p, const attn_run *r) {
    attn_job j = {p, r->q, r->n_q, r->pos, r->kv, r->out, pick_ops(kt->isa), ATTN_ONE, kt->prefetch == PREFETCH_NTA};
#if WICK_X86
    if (p->head_dim % 8 == 0)
        j.kernel = kt->isa >= ISA_AVX512 ? ATTN_BATCH_AVX512
                   : kt->isa >= ISA_AVX2 ? ATTN_ONE_AVX2
                                                  : ATTN_ONE;
#endif
    return j;
}

void attention(const kernel_tuning *kt, wick_pool *pool, const attn_params *p, const float *q, int n_q,
               const int32_t *pos, const attn_kv *kv, float *out) {
    if (n_q <= 0) return;
    attn_run r = {q, n_q, pos, kv, out};
    attn_job j = attn_make(kt, p, &r);
    if ((int64_t)n_q * p->n_heads < 2) pool = NULL;
    pool_run(pool, attn_task, &j);
}

/* ---- several sequences in one hand-off ---- */

typedef struct attn_multi_job {
    attn_job *jobs;
    int n;
    int64_t total;
} attn_multi_job;

/* The calls' work items laid end to end, one contiguous range per thread. */
static void attn_multi_task(void *arg, int ith, int nth) {
    const attn_multi_job *m = arg;
    int64_t lo, hi, base = 0;
    pool_split(m->total, ith, nth, 1, &lo, &hi);
    for (int r = 0; r < m->n && base < hi; r++) {
        const int64_t items = attn_items(&m->jobs[r]);
        const int64_t a = lo > base ? lo - base : 0, b = hi - base < items ? hi - base : items;
        if (b <= a) {
            base += items;
            continue;
        }
        const attn_next *after = NULL;
#if WICK_X86
        attn_next an;
        if (b == items && hi - base > items && r + 1 < m->n && m->jobs[r + 1].kernel == ATTN_BATCH_AVX512) {
            attn_batch first;
            int kvh;
            attn_fill(&m->jobs[r + 1], 0, hi - base - items, &first, &kvh);
            an = attn_next_of(m->jobs[r + 1].kv, kvh, &first);
            after = &an;
        }
#endif
        attn_range(&m->jobs[r], a, b, after);
        base += items;
    }
}

void attention_multi(const kernel_tuning *kt, wick_pool *pool, const attn_params *p, const attn_run *runs, int n_runs) {
    attn_job local[ATTN_MULTI_MAX];
    for (int k = 0; k < n_runs; k += ATTN_MULTI_MAX) {
        attn_multi_job m = {local, 0, 0};
        for (int r = k; r < n_runs && m.n < ATTN_MULTI_MAX; r++) {
            if (runs[r].n_q <= 0) continue;
            local[m.n] = attn_make(kt, p, &runs[r]);
            m.total += attn_items(&local[m.n]);
            m.n++;
        }
        if (m.total > 0) pool_run(m.total < 2 ? NULL : pool, attn_multi_task, &m);
    }
}

/* ---- reference: scores, max, sum, weighted sum; double accumulation ---- */

/* Element d of KV head kvh at position pk in base (kv->k or kv->v). */
static double ref_load(const attn_kv *kv, const void *base, int32_t pk, int kvh, int d) {
    const char *at = attn_kv_at(kv, base, pk, kvh);
    if (kv->type == WICK_F16) return fp16_to_f32(((const uint16_t *)at)[d]);
    return ((const float *)at)[d];
}

static double ref_score(const attn_params *p, const float *q, const attn_kv *kv, int kvh,
                        int32_t pk) {
    double s = 0.0;
    for (int d = 0; d < p->head_dim; d++) s += (double)q[d] * ref_load(kv, kv->k, pk, kvh, d);
    s *= p->scale;
    return p->softcap > 0.0f ? p->softcap * tanh(s / p->softcap) : s;
}

void attention_reference(const attn_params *p, const float *q, int n_q, const int32_t *pos,
                         const attn_kv *kv, float *out) {
    const int D = p->head_dim, group = p->n_heads / p->n_kv_heads;
    double acc[ATTN_MAX];
    for (int i = 0; i < n_q; i++) {
        const int32_t start = attn_first_key(p, pos[i]);
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
                for (int d = 0; d < D; d++) acc[d] += e * ref_load(kv, kv->v, pk, kvh, d);
            }
            for (int d = 0; d < D; d++) oh[d] = (float)(acc[d] / l);
        }
    }
}
