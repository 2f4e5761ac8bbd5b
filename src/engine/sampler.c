/* sampler.c — logits processors (logit bias, token mask), penalties,
 * temperature, top-k / top-p / min-p and the seeded draw (order and
 * semantics in sampler.h); logprobs of the raw logits; wick_sampling_default.
 *
 * The passes over the whole vocabulary are written in blocks of BLK with
 * branch-free bodies and restrict pointers so that compilers vectorize them
 * at -O2; blocks with nothing of interest are skipped by a cheap "any" test. */
#include "engine/sampler.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "kernels/cpu.h"

#define BLK 16

wick_sampling wick_sampling_default(void) {
    wick_sampling p = {0};
    p.temperature = 0.8f;
    p.top_k = 40;
    p.top_p = 0.95f;
    p.min_p = 0.05f;
    p.repeat_penalty = 1.0f;
    p.repeat_last_n = 64;
    return p;
}

int sampler_init(sampler *s, int n_vocab, cpu_isa isa, wick_error *err) {
    memset(s, 0, sizeof *s);
    if (n_vocab <= 0) return wick_fail(err, "sampler: vocabulary size %d must be positive", n_vocab);
    s->n_vocab = n_vocab;
    s->isa = isa;
    s->logit = malloc((size_t)n_vocab * sizeof *s->logit);
    s->w = malloc((size_t)n_vocab * sizeof *s->w);
    s->val = malloc((size_t)n_vocab * sizeof *s->val);
    s->id = malloc((size_t)n_vocab * sizeof *s->id);
    s->count = calloc((size_t)n_vocab, sizeof *s->count);
    if (!s->logit || !s->w || !s->val || !s->id || !s->count) {
        sampler_free(s);
        return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
    }
    return 0;
}

void sampler_free(sampler *s) {
    free(s->logit);
    free(s->w);
    free(s->val);
    free(s->id);
    free(s->count);
    s->logit = s->w = s->val = NULL;
    s->id = s->count = NULL;
}

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void sampler_rng_seed(sampler_rng *r, uint64_t seed) {
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

double sampler_uniform(sampler_rng *rng) {
    uint64_t *r = rng->s;
    uint64_t out = rotl(r[1] * 5, 7) * 9, t = r[1] << 17;
    r[2] ^= r[0];
    r[3] ^= r[1];
    r[1] ^= r[2];
    r[0] ^= r[3];
    r[2] ^= t;
    r[3] = rotl(r[3], 45);
    return (double)(out >> 11) * 0x1.0p-53;
}

/* ---- logits processors ---- */

static void bias_apply(const logits_proc *self, float *logits, int n_vocab) {
    const wick_logit_bias *b = self->data;
    for (int i = 0; i < self->n; i++) {
        const int32_t t = b[i].token;
        if (t >= 0 && t < n_vocab) logits[t] += b[i].bias;
    }
}

logits_proc logits_proc_bias(const wick_logit_bias *bias, int n) {
    return (logits_proc){.apply = bias_apply, .data = bias, .n = n};
}

int token_mask_init(token_mask *m, int n_vocab, wick_error *err) {
    m->n_vocab = n_vocab > 0 ? n_vocab : 0;
    const size_t words = ((size_t)m->n_vocab + 63) / 64;
    m->bits = malloc((words ? words : 1) * sizeof *m->bits);
    if (!m->bits) return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
    token_mask_fill(m, true);
    return 0;
}

void token_mask_free(token_mask *m) {
    free(m->bits);
    m->bits = NULL;
    m->n_vocab = 0;
}

void token_mask_fill(token_mask *m, bool all) {
    const int words = (m->n_vocab + 63) / 64;
    for (int w = 0; w < words; w++) m->bits[w] = all ? ~0ull : 0; /* bits past n_vocab are never read */
}

/* The 64 logits of a word kept where bits says so, -inf elsewhere, with no
 * branch per token (a mask inside a string allows most tokens of a word but
 * not all, and a branch per bit mispredicts there): each lane tests its own
 * constant bit, which the compiler vectorizes with plain SSE2. */
static void mask_word(float *logits, uint64_t bits) {
    static const uint32_t bit_of[32] = {
        1u << 0,  1u << 1,  1u << 2,  1u << 3,  1u << 4,  1u << 5,  1u << 6,  1u << 7,  1u << 8,  1u << 9,  1u << 10,
        1u << 11, 1u << 12, 1u << 13, 1u << 14, 1u << 15, 1u << 16, 1u << 17, 1u << 18, 1u << 19, 1u << 20, 1u << 21,
        1u << 22, 1u << 23, 1u << 24, 1u << 25, 1u << 26, 1u << 27, 1u << 28, 1u << 29, 1u << 30, 1u << 31};
    uint32_t v[64];
    memcpy(v, logits, sizeof v);
    const uint32_t half[2] = {(uint32_t)bits, (uint32_t)(bits >> 32)};
    for (int h = 0; h < 2; h++)
        for (int j = 0; j < 32; j++) {
            const uint32_t keep = (half[h] & bit_of[j]) ? ~0u : 0u;
            v[h * 32 + j] = (v[h * 32 + j] & keep) | (0xff800000u & ~keep); /* -inf's bits */
        }
    memcpy(logits, v, sizeof v);
}

/* Words of all ones (the usual case while a grammar allows most tokens)
 * cost one compare. */
static void mask_apply(const logits_proc *self, float *logits, int n_vocab) {
    const token_mask *m = self->data;
    const int n = m->n_vocab < n_vocab ? m->n_vocab : n_vocab;
    int i = 0;
    for (; i + 64 <= n; i += 64) {
        const uint64_t b = m->bits[i >> 6];
        if (b == 0)
            for (int j = 0; j < 64; j++) logits[i + j] = -INFINITY;
        else if (b != ~0ull)
            mask_word(logits + i, b);
    }
    for (; i < n; i++)
        if (!(m->bits[i >> 6] >> (i & 63) & 1)) logits[i] = -INFINITY;
    for (i = n; i < n_vocab; i++) logits[i] = -INFINITY;
}

logits_proc logits_proc_mask(const token_mask *m) { return (logits_proc){.apply = mask_apply, .data = m}; }

void sampler_cfg_init(sampler_cfg *cfg, const wick_sampling *p) {
    memset(cfg, 0, sizeof *cfg);
    cfg->p = p;
    if (p->n_logit_bias > 0) cfg->procs[cfg->n_procs++] = logits_proc_bias(p->logit_bias, p->n_logit_bias);
}

int sampler_cfg_add(sampler_cfg *cfg, logits_proc proc) {
    if (cfg->n_procs == SAMPLER_MAX_PROCS) return -1;
    cfg->procs[cfg->n_procs++] = proc;
    return 0;
}

/* ---- branch-free float helpers ---- */

static inline uint32_t fbits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float bitsf(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* c ? a : b as bit masking, so that loops using it vectorize. */
static inline float fsel(int c, float a, float b) {
    uint32_t m = 0u - (uint32_t)(c != 0);
    return bitsf((fbits(a) & m) | (fbits(b) & ~m));
}

/* e^x for x <= 0 (relative error <= 1.1e-7, about one ulp; checked over every
 * float in (-87, 0]); 0 for x <= -87 and for NaN;
 * exactly 1 at 0. Range reduction x = n·ln2 + r, |r| <= ln2/2, then a
 * degree-7 Taylor polynomial; no branches, no calls. */
static inline float exp_neg(float x) {
    int ok = x > -87.0f;
    float xc = fsel(ok, x, -87.0f);
    xc = fsel(xc < 0.0f, xc, 0.0f);
    float nf = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f; /* round to nearest */
    int32_t ni = (int32_t)nf;                                           /* in [-126, 0] */
    float r = (xc - nf * 0.693145751953125f) - nf * 1.42860682030941723212e-6f;
    float p = 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 + r * (1.0f / 120 +
                                                                                   r * (1.0f / 720 + r * (1.0f / 5040)))))));
    return fsel(ok, p * bitsf((uint32_t)(ni + 127) << 23), 0.0f);
}

/* w[i] = e^((L[i] - mx) · inv_t) for i in [0, n); NaN → 0. The same IEEE
 * operations at every ISA (no FMA), so every ISA gives the same bits. */
#define WEIGHTS_BODY                                                                   \
    int i = 0;                                                                         \
    for (; i + BLK <= n; i += BLK)                                                     \
        for (int j = 0; j < BLK; j++) w[i + j] = exp_neg((L[i + j] - mx) * inv_t);    \
    for (; i < n; i++) w[i] = exp_neg((L[i] - mx) * inv_t);

static void weights_base(const float *restrict L, float *restrict w, int n, float mx, float inv_t) {
    WEIGHTS_BODY
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SAMPLER_X86 1
__attribute__((target("avx2"))) static void weights_avx2(const float *restrict L, float *restrict w,
                                                         int n, float mx, float inv_t) {
    WEIGHTS_BODY
}
__attribute__((target("avx512f"))) static void weights_avx512(const float *restrict L,
                                                              float *restrict w, int n, float mx,
                                                              float inv_t) {
    WEIGHTS_BODY
}
#endif

static void weights(cpu_isa isa, const float *restrict L, float *restrict w, int n, float mx, float inv_t) {
#ifdef SAMPLER_X86
    if (isa >= ISA_AVX512) return weights_avx512(L, w, n, mx, inv_t);
    if (isa >= ISA_AVX2) return weights_avx2(L, w, n, mx, inv_t);
#endif
    weights_base(L, w, n, mx, inv_t);
}

/* Sum of w[0..len), len <= CHUNK: BLK float lanes (each adds at most
 * CHUNK / BLK values), combined in a fixed order. Always the same bits for
 * the same input. */
#define CHUNK 1024
static double chunk_sum(const float *restrict w, int len) {
    float a[BLK] = {0};
    int i = 0;
    for (; i + BLK <= len; i += BLK)
        for (int j = 0; j < BLK; j++) a[j] += w[i + j];
    for (; i < len; i++) a[0] += w[i];
    double t = 0;
    for (int j = 0; j < BLK; j++) t += a[j];
    return t;
}

static double weights_sum(const float *w, int n) {
    double S = 0;
    for (int i = 0; i < n; i += CHUNK) S += chunk_sum(w + i, n - i < CHUNK ? n - i : CHUNK);
    return S;
}

/* ---- argmax ---- */

int32_t sampler_argmax(const float *logits, int n) {
    const float *L = logits;
    float bv = -INFINITY;
    int32_t best = -1;
    int i = 0;
    for (; i + BLK <= n; i += BLK) {
        int any = 0;
        for (int j = 0; j < BLK; j++) any |= L[i + j] > bv;
        if (!any) continue;
        for (int j = 0; j < BLK; j++)
            if (L[i + j] > bv) {
                bv = L[i + j];
                best = i + j;
            }
    }
    for (; i < n; i++)
        if (L[i] > bv) {
            bv = L[i];
            best = i;
        }
    if (best >= 0) return best;
    for (i = 0; i < n; i++) /* all -inf or NaN: the first -inf */
        if (L[i] == L[i]) return i;
    return 0;
}

/* ---- candidate heaps: ordered by value, then lower id first ---- */

static inline bool worse(float av, int32_t ai, float bv, int32_t bi) {
    return av < bv || (av == bv && ai > bi);
}

/* Min-heap (root = worst) sift-down of element i among n. */
static void sift_down(float *v, int32_t *id, int i, int n) {
    float xv = v[i];
    int32_t xi = id[i];
    for (;;) {
        int c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && worse(v[c + 1], id[c + 1], v[c], id[c])) c++;
        if (!worse(v[c], id[c], xv, xi)) break;
        v[i] = v[c];
        id[i] = id[c];
        i = c;
    }
    v[i] = xv;
    id[i] = xi;
}

static void heapify(float *v, int32_t *id, int n) {
    for (int i = n / 2 - 1; i >= 0; i--) sift_down(v, id, i, n);
}

/* Sort n candidates best first (value descending, ties by lower id). */
static void sort_desc(float *v, int32_t *id, int n) {
    heapify(v, id, n);
    for (int end = n - 1; end > 0; end--) {
        float tv = v[0];
        int32_t ti = id[0];
        v[0] = v[end];
        id[0] = id[end];
        v[end] = tv;
        id[end] = ti;
        sift_down(v, id, 0, end);
    }
}

/* The k best of L[0..n) into s->val / s->id, sorted best first. NaN = -inf. */
static void top_k_select(sampler *s, const float *L, int n, int k) {
    float *v = s->val;
    int32_t *id = s->id;
    for (int i = 0; i < k; i++) {
        float x = L[i];
        v[i] = x == x ? x : -INFINITY;
        id[i] = i;
    }
    heapify(v, id, k);
    /* Ids arrive in increasing order, so a newcomer beats the root only if
     * strictly greater (NaN never is). */
    int i = k;
    for (; i + BLK <= n; i += BLK) {
        float t = v[0];
        int any = 0;
        for (int j = 0; j < BLK; j++) any |= L[i + j] > t;
        if (!any) continue;
        for (int j = 0; j < BLK; j++)
            if (L[i + j] > v[0]) {
                v[0] = L[i + j];
                id[0] = i + j;
                sift_down(v, id, 0, k);
            }
    }
    for (; i < n; i++)
        if (L[i] > v[0]) {
            v[0] = L[i];
            id[0] = i;
            sift_down(v, id, 0, k);
        }
    sort_desc(v, id, k);
}

/* ---- penalties ---- */

static bool penalties_on(const wick_sampling *p) {
    return (p->repeat_penalty > 0 && p->repeat_penalty != 1) || p->presence_penalty != 0 ||
           p->frequency_penalty != 0;
}

/* Apply the penalties of the history window hist[0..n_hist) to s->logit in
 * place; s->count is all zero again on return. */
static void apply_penalties(sampler *s, const wick_sampling *p, const int32_t *hist, int n_hist) {
    int n = s->n_vocab;
    float *L = s->logit;
    int32_t *cnt = s->count;
    for (int i = 0; i < n_hist; i++)
        if (hist[i] >= 0 && hist[i] < n) cnt[hist[i]]++;
    float rp = p->repeat_penalty > 0 ? p->repeat_penalty : 1.0f;
    for (int i = 0; i < n_hist; i++) {
        int32_t t = hist[i];
        if (t < 0 || t >= n || cnt[t] == 0) continue;
        float x = L[t];
        if (rp != 1.0f) x = x > 0 ? x / rp : x * rp;
        x -= p->presence_penalty + (float)cnt[t] * p->frequency_penalty;
        L[t] = x == x ? x : -INFINITY; /* inf - inf or a NaN logit: never drawn */
        cnt[t] = 0;
    }
}

/* ---- draws ---- */

/* What a draw picks from once the knobs are applied (prepare below): one
 * token (greedy, or an infinite best logit), the candidate list val/id[0..m)
 * (weights; the draw is proportional to them), or the whole vocabulary's
 * weights w with their sum S. */
typedef struct cand {
    int kind; /* CAND_ONE, CAND_LIST, CAND_VOCAB */
    int32_t id;
    int m;
    double S;
} cand;
enum { CAND_ONE, CAND_LIST, CAND_VOCAB };

/* val/id[0..m): weights (the largest is 1) of a distribution of total
 * weight Z; the first n_sure are known to lie inside the top-p nucleus (in
 * any order), the rest are sorted best first and none is larger than those.
 * Apply top-p and min-p: the candidates that remain. */
static cand list_cut(const sampler *s, const wick_sampling *p, int m, int n_sure, double Z) {
    const float *v = s->val;
    if (p->top_p > 0 && p->top_p < 1) {
        double target = (double)p->top_p * Z, cum = 0;
        for (int i = 0; i < m; i++) {
            cum += v[i];
            if (cum >= target && i >= n_sure) {
                m = i + 1;
                break;
            }
        }
    }
    if (p->min_p > 0) {
        float cut = p->min_p < 1 ? p->min_p : 1.0f;
        while (m > 1 && m > n_sure && v[m - 1] < cut) m--;
    }
    double S = 0;
    for (int i = 0; i < m; i++) S += v[i];
    return (cand){.kind = CAND_LIST, .m = m, .S = S};
}

/* Draw from the list of c, renormalized. */
static int32_t draw_list(const sampler *s, const cand *c, sampler_rng *rng) {
    const float *v = s->val;
    int m = c->m;
    double r = sampler_uniform(rng) * c->S, acc = 0;
    for (int i = 0; i < m; i++) {
        acc += v[i];
        if (r < acc) return s->id[i];
    }
    while (m > 1 && v[m - 1] <= 0) m--; /* r rounded past the last weight */
    return s->id[m - 1];
}

/* Draw token i with probability w[i] / S over the whole vocabulary, where S
 * is weights_sum(w, n): whole chunks are skipped by their sums. */
static int32_t draw_vocab(const float *w, int n, double S, sampler_rng *rng) {
    double r = sampler_uniform(rng) * S, acc = 0;
    for (int i = 0; i < n; i += CHUNK) {
        int len = n - i < CHUNK ? n - i : CHUNK;
        double c = chunk_sum(w + i, len);
        if (r >= acc + c) {
            acc += c;
            continue;
        }
        for (int j = i; j < i + len; j++) {
            acc += w[j];
            if (r < acc && w[j] > 0) return j;
        }
        for (int j = i + len - 1; j >= i; j--) /* rounding inside the chunk */
            if (w[j] > 0) return j;
    }
    for (int i = n - 1; i > 0; i--) /* r rounded past the end: the last positive weight */
        if (w[i] > 0) return i;
    return 0;
}

/* ---- top-p over the whole vocabulary ----
 * Buckets of weights by the top bits of their float encoding (exponent and two
 * mantissa bits: monotone in the value, ~0.17 nats wide). The buckets, from the
 * top, whose mass first reaches top_p·Z bound the nucleus: tokens of higher
 * buckets are all in it (no sort needed), and only the tokens of the crossing
 * bucket are sorted. */
#define KEY_SHIFT 21
#define N_KEYS ((0x3F800000u >> KEY_SHIFT) + 1) /* weights lie in [0, 1] */

static cand top_p_vocab(sampler *s, const wick_sampling *p, const float *w, int n, float min_p) {
    /* Histogram of the weights >= 2^-20 (blocks without one are skipped);
     * tokens below weigh at most n·2^-20 in all, so the crossing is almost
     * always above; if not, histogram everything. */
    double hist[N_KEYS];
    double Z = weights_sum(w, n), target = (double)p->top_p * Z, cum = 0;
    int kb = -1;
    for (int pass = 0; pass < 2 && kb < 0; pass++) {
        float floor_w = pass == 0 ? 0x1p-20f : 0.0f;
        memset(hist, 0, sizeof hist);
        for (int i = 0; i < n; i += BLK) {
            int e = i + BLK <= n ? i + BLK : n, any = 0;
            if (e - i == BLK)
                for (int j = 0; j < BLK; j++) any |= w[i + j] >= floor_w;
            else
                any = 1;
            if (!any) continue;
            for (int j = i; j < e; j++)
                if (w[j] >= floor_w) {
                    uint32_t k = fbits(w[j]) >> KEY_SHIFT;
                    hist[k < N_KEYS ? k : N_KEYS - 1] += w[j];
                }
        }
        cum = 0;
        for (int k = N_KEYS - 1; k >= 0; k--) {
            cum += hist[k];
            if (cum >= target) {
                kb = k;
                break;
            }
        }
    }
    if (kb < 0) kb = 0; /* rounding: everything positive is a candidate */
    /* Tokens of key > kb: sure; key == kb: sorted; below: out. min-p cuts too. */
    float lo = bitsf((uint32_t)kb << KEY_SHIFT), hi = bitsf((uint32_t)(kb + 1) << KEY_SHIFT);
    if (lo < min_p) lo = min_p;
    if (hi < lo) hi = lo;
    if (!(lo > 0)) lo = 0x1p-149f; /* never a zero weight */
    int ns = 0, nb = 0;
    double mass_sure = 0;
    for (int i = 0; i < n; i += BLK) {
        int e = i + BLK <= n ? i + BLK : n, any = 0;
        if (e - i == BLK)
            for (int j = 0; j < BLK; j++) any |= w[i + j] >= lo;
        else
            any = 1;
        if (!any) continue;
        for (int j = i; j < e; j++) {
            if (w[j] >= hi) {
                s->val[ns] = w[j];
                s->id[ns++] = j;
                mass_sure += w[j];
            } else if (w[j] >= lo) {
                nb++;
                s->val[n - nb] = w[j];
                s->id[n - nb] = j;
            }
        }
    }
    /* The boundary tokens, collected at the end, follow the sure ones. */
    memmove(s->val + ns, s->val + n - nb, (size_t)nb * sizeof *s->val);
    memmove(s->id + ns, s->id + n - nb, (size_t)nb * sizeof *s->id);
    if (mass_sure >= target) { /* rounding put the cut among the sure: sort them all */
        sort_desc(s->val, s->id, ns + nb);
        ns = 0;
    } else {
        sort_desc(s->val + ns, s->id + ns, nb);
    }
    return list_cut(s, p, ns + nb, ns, Z);
}

/* The processors and penalties applied to logits: the logits the knobs see
 * (logits itself when nothing changes them, else s->logit). */
static const float *process(sampler *s, const sampler_cfg *cfg, const float *logits, const int32_t *history,
                            int n_history) {
    const wick_sampling *p = cfg->p;
    int n = s->n_vocab;
    const float *L = logits;
    const bool pen = history && n_history > 0 && p->repeat_last_n != 0 && penalties_on(p);
    if (pen || cfg->n_procs > 0) { /* a copy of the logits to change */
        memcpy(s->logit, logits, (size_t)n * sizeof *s->logit);
        L = s->logit;
    }
    for (int i = 0; i < cfg->n_procs; i++) cfg->procs[i].apply(&cfg->procs[i], s->logit, n);
    if (pen) {
        int w = p->repeat_last_n < 0 || p->repeat_last_n > n_history ? n_history : p->repeat_last_n;
        apply_penalties(s, p, history + (n_history - w), w);
    }
    return L;
}

/* The knobs applied to the processed logits L: what the draw picks from. */
static cand knobs(sampler *s, const wick_sampling *p, const float *L) {
    int n = s->n_vocab;
    if (!(p->temperature > 0)) return (cand){.kind = CAND_ONE, .id = sampler_argmax(L, n)};
    float inv_t = 1.0f / p->temperature;
    if (!isfinite(inv_t)) return (cand){.kind = CAND_ONE, .id = sampler_argmax(L, n)}; /* a denormal temperature */

    /* top-k: a heap scan; the k candidates are then sorted. */
    if (p->top_k > 0 && p->top_k < n) {
        int k = p->top_k;
        top_k_select(s, L, n, k);
        float mx = s->val[0];
        if (!isfinite(mx)) return (cand){.kind = CAND_ONE, .id = s->id[0]};
        for (int i = 0; i < k; i++) s->val[i] = exp_neg((s->val[i] - mx) * inv_t);
        double Z = 0;
        for (int i = 0; i < k; i++) Z += s->val[i];
        return list_cut(s, p, k, 0, Z);
    }

    /* No top-k: the whole vocabulary. The best token has weight exactly 1. */
    int32_t best = sampler_argmax(L, n);
    float mx = L[best];
    if (!isfinite(mx)) return (cand){.kind = CAND_ONE, .id = best};
    float min_p = p->min_p > 0 ? (p->min_p < 1 ? p->min_p : 1.0f) : 0.0f;
    if (p->top_p > 0 && p->top_p < 1) {
        weights(s->isa, L, s->w, n, mx, inv_t);
        return top_p_vocab(s, p, s->w, n, min_p);
    }
    if (min_p > 0) {
        /* Only tokens within log(min_p) of the best can survive: collect those. */
        float cut = logf(min_p) - 1e-4f;
        int m = 0;
        for (int i = 0; i < n; i += BLK) {
            int e = i + BLK <= n ? i + BLK : n, any = 0;
            if (e - i == BLK)
                for (int j = 0; j < BLK; j++) any |= (L[i + j] - mx) * inv_t >= cut;
            else
                any = 1;
            if (!any) continue;
            for (int j = i; j < e; j++) {
                float x = (L[j] - mx) * inv_t;
                if (x >= cut) {
                    s->val[m] = exp_neg(x);
                    s->id[m++] = j;
                }
            }
        }
        int k = 0; /* exact: weight >= min_p × 1 */
        for (int j = 0; j < m; j++)
            if (s->val[j] >= min_p) {
                s->val[k] = s->val[j];
                s->id[k++] = s->id[j];
            }
        return list_cut(s, p, k, k, 0);
    }
    weights(s->isa, L, s->w, n, mx, inv_t);
    return (cand){.kind = CAND_VOCAB, .m = n, .S = weights_sum(s->w, n)};
}

static cand prepare(sampler *s, const sampler_cfg *cfg, const float *logits, const int32_t *history,
                    int n_history) {
    return knobs(s, cfg->p, process(s, cfg, logits, history, n_history));
}

int32_t sampler_sample(sampler *s, const sampler_cfg *cfg, const float *logits, const int32_t *history,
                       int n_history, sampler_rng *rng) {
    const cand c = prepare(s, cfg, logits, history, n_history);
    if (c.kind == CAND_ONE) return c.id;
    if (c.kind == CAND_LIST) return draw_list(s, &c, rng);
    return draw_vocab(s->w, c.m, c.S, rng);
}

void sampler_dist(sampler *s, const sampler_cfg *cfg, const float *logits, const int32_t *history, int n_history,
                  float *out) {
    const cand c = prepare(s, cfg, logits, history, n_history);
    const int n = s->n_vocab;
    if (c.kind == CAND_VOCAB) {
        const double inv = 1.0 / c.S;
        for (int i = 0; i < n; i++) out[i] = (float)(s->w[i] * inv);
        return;
    }
    memset(out, 0, (size_t)n * sizeof *out);
    if (c.kind == CAND_ONE) {
        out[c.id] = 1.0f;
        return;
    }
    if (!(c.S > 0)) { /* every weight rounded to 0: the draw takes the first candidate */
        out[s->id[0]] = 1.0f;
        return;
    }
    const double inv = 1.0 / c.S;
    for (int i = 0; i < c.m; i++) out[s->id[i]] = (float)(s->val[i] * inv);
}

int32_t sampler_draw_dist(const float *dist, int n, sampler_rng *rng) {
    return draw_vocab(dist, n, weights_sum(dist, n), rng);
}

/* ---- post-sampling probabilities ---- */

/* Keep (v, id) among ti's best n_top so far (value descending, lower id first). */
static void top_keep(wick_token_info *ti, int n_top, float v, int32_t id) {
    if (n_top <= 0 || (ti->n_top == n_top && !worse(ti->top_probs[n_top - 1], ti->top_ids[n_top - 1], v, id))) return;
    int k = ti->n_top < n_top ? ti->n_top++ : n_top - 1;
    while (k > 0 && worse(ti->top_probs[k - 1], ti->top_ids[k - 1], v, id)) {
        ti->top_probs[k] = ti->top_probs[k - 1];
        ti->top_ids[k] = ti->top_ids[k - 1];
        k--;
    }
    ti->top_probs[k] = v;
    ti->top_ids[k] = id;
}

/* One token takes all the mass: it leads the list with 1, the runners-up
 * kept there (at most n_top - 1) follow with 0. */
static void lead(wick_token_info *ti, int n_top, int32_t one) {
    ti->prob = ti->id == one ? 1.0f : 0.0f;
    if (n_top <= 0) return;
    for (int k = ti->n_top; k > 0; k--) ti->top_ids[k] = ti->top_ids[k - 1];
    ti->top_ids[0] = one;
    ti->n_top++;
    for (int k = 0; k < ti->n_top; k++) ti->top_probs[k] = k == 0 ? 1.0f : 0.0f;
}

void sampler_post_probs(sampler *s, const sampler_cfg *cfg, const float *logits, const int32_t *history,
                        int n_history, wick_token_info *ti, int n_top) {
    const float *L = process(s, cfg, logits, history, n_history);
    const cand c = knobs(s, cfg->p, L);
    const int n = s->n_vocab;
    if (n_top > WICK_MAX_TOP_LOGPROBS) n_top = WICK_MAX_TOP_LOGPROBS;
    ti->n_top = 0;
    if (c.kind == CAND_ONE) { /* greedy: the runners-up by processed logit, within top_k, none ruled out */
        int lim = n_top;
        if (cfg->p->top_k > 0 && cfg->p->top_k < lim) lim = cfg->p->top_k;
        for (int i = 0; i < n; i++)
            if (i != c.id && L[i] > -INFINITY) top_keep(ti, lim - 1, L[i], i);
        lead(ti, n_top, c.id);
        return;
    }
    if (c.kind == CAND_LIST && !(c.S > 0)) { /* every weight rounded to 0: the draw takes the first */
        for (int i = 1; i < c.m; i++) top_keep(ti, n_top - 1, s->val[i], s->id[i]);
        lead(ti, n_top, s->id[0]);
        return;
    }
    /* the probabilities exactly as sampler_dist gives them */
    const double inv = 1.0 / c.S;
    ti->prob = 0;
    if (c.kind == CAND_LIST) {
        for (int i = 0; i < c.m; i++) {
            if (s->id[i] == ti->id) ti->prob = (float)(s->val[i] * inv);
            top_keep(ti, n_top, s->val[i], s->id[i]);
        }
    } else {
        if (ti->id >= 0 && ti->id < n) ti->prob = (float)(s->w[ti->id] * inv);
        for (int i = 0; i < n; i++)
            if (L[i] > -INFINITY) top_keep(ti, n_top, s->w[i], i);
    }
    for (int k = 0; k < ti->n_top; k++) ti->top_probs[k] = (float)(ti->top_probs[k] * inv);
}

/* ---- logprobs ---- */

void sampler_logprobs(const float *logits, int n_vocab, wick_token_info *ti, int n_top) {
    float mx = -INFINITY;
    for (int i = 0; i < n_vocab; i++)
        if (logits[i] > mx) mx = logits[i];
    double sum = 0;
    for (int i = 0; i < n_vocab; i++) sum += exp((double)logits[i] - mx);
    const double lse = mx + log(sum);
    ti->logprob = (float)(logits[ti->id] - lse);
    ti->n_top = 0;
    for (int i = 0; i < n_vocab && n_top > 0; i++) {
        float v = logits[i];
        if (ti->n_top == n_top && !(v > ti->top_logprobs[n_top - 1])) continue;
        int k = ti->n_top < n_top ? ti->n_top++ : n_top - 1;
        while (k > 0 && v > ti->top_logprobs[k - 1]) {
            ti->top_logprobs[k] = ti->top_logprobs[k - 1];
            ti->top_ids[k] = ti->top_ids[k - 1];
            k--;
        }
        ti->top_logprobs[k] = v;
        ti->top_ids[k] = i;
    }
    for (int k = 0; k < ti->n_top; k++) ti->top_logprobs[k] = (float)(ti->top_logprobs[k] - lse);
}
