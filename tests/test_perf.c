/* test_perf.c — the performance features: SIMD kernels added for them
 * against their scalar twins (f32→f16 rows, the bandwidth probe's word sum),
 * matmul_multi against separate matmuls (bit-identical, every weight type,
 * odd sizes, 1-3 threads), the F16 KV cache against F32 (logits within
 * 2e-2 × max|logit|, same argmax) on stories260K and tiny test models,
 * --dtype conversion at load (HF f32 → q8_0/q4_0/f16 bit-identical to
 * make-test-model's file of that type, which it quantizes from the same f32
 * weights, the MoE archs' expert stacks and per-expert matrices too; HF
 * bf16 → q8_0 against the q8_0 GGUF: cosine >= 0.999 and the same
 * top-1; bf16 → q4_0 against the q4_0 GGUF: cosine >= 0.995 (bf16 rounding
 * moves some weights across a 4-bit level) and the same top-1; an unknown
 * dtype's error; types whose block does not divide stories260K's rows fall
 * back per tensor: cosine against F32 >= 0.999 for 8-bit, 0.99 for 4-bit and
 * lower, the same top-1), and the profiling counters.
 * No timing asserts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "tuning.h"
#include "core/tensor.h"
#include "core/threadpool.h"
#include "cli/bench_measure.h"
#include "kernels/convert.h"
#include "kernels/cpu.h"
#include "kernels/matmul.h"
#include "kernels/ops.h"
#include "cli/testmodel.h"
#include "wick.h"

static uint64_t rng = 0x1234567887654321ull;
static uint32_t rnd(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}
static float rndf(void) { return (float)(rnd() & 0xffffff) / (float)0x800000 - 1.0f; }

static void test_f16_row(void) {
    const cpu_isa saved = tt()->isa;
    for (int n = 0; n < 80; n += (n < 20 ? 1 : 13)) {
        float *x = malloc(sizeof(float) * (size_t)(n + 1));
        uint16_t *a = malloc(2 * (size_t)(n + 1)), *b = malloc(2 * (size_t)(n + 1));
        for (int i = 0; i < n; i++) {
            float s = (float)(1 << (rnd() % 24)) / 4096.0f;
            x[i] = rndf() * s;
        }
        if (n > 3) x[1] = 1e6f, x[2] = -INFINITY, x[3] = 6.1e-5f; /* overflow, inf, subnormal edge */
        f32_to_f16_row_scalar(x, a, n);
        for (int isa = 0; isa <= (int)cpu_best_isa(); isa++) {
            CHECK(tt_set_isa((cpu_isa)isa));
            memset(b, 0, 2 * (size_t)(n + 1));
            f32_to_f16_row(x, b, n);
            CHECK_MSG(memcmp(a, b, 2 * (size_t)n) == 0, "f32_to_f16_row n=%d isa=%s", n, cpu_isa_name((cpu_isa)isa));
        }
        /* and back: every bit pattern of the row (NaN included) as the scalar twin widens it */
        float *fa = malloc(sizeof(float) * (size_t)(n + 1)), *fb = malloc(sizeof(float) * (size_t)(n + 1));
        for (int i = 0; i < n; i++) a[i] = (uint16_t)rnd();
        f16_to_f32_row_scalar(a, fa, n);
        for (int isa = 0; isa <= (int)cpu_best_isa(); isa++) {
            CHECK(tt_set_isa((cpu_isa)isa));
            memset(fb, 0, sizeof(float) * (size_t)(n + 1));
            f16_to_f32_row(a, fb, n);
            for (int i = 0; i < n; i++) {
                bool same = memcmp(&fa[i], &fb[i], 4) == 0 || (fa[i] != fa[i] && fb[i] != fb[i]);
                CHECK_MSG(same, "f16_to_f32_row n=%d i=%d isa=%s", n, i, cpu_isa_name((cpu_isa)isa));
            }
        }
        free(fa), free(fb);
        tt_set_isa(saved);
        free(x), free(a), free(b);
    }
}

/* rope_rotate_f16 (span placement) = widen, rope_rotate, narrow: every ISA
 * and the scalar twin, both styles, partial rotation, odd sizes, in place. */
static void test_rope_f16(void) {
    const cpu_isa saved = tt()->isa;
    const int dims[] = {2, 6, 32, 34, 64, 96, 128, 130, 256};
    for (size_t di = 0; di < sizeof dims / sizeof dims[0]; di++)
        for (int partial = 0; partial < 2; partial++)
            for (int style = 0; style < 2; style++) {
                const int hd = dims[di], rot = partial ? (hd / 2) & ~1 : hd, half = rot / 2;
                if (rot < 2) continue;
                uint16_t src[256], want[256], got[256];
                float row[256], cs[128], sn[128];
                for (int i = 0; i < hd; i++) src[i] = f32_to_fp16(rndf() * 4.0f);
                for (int i = 0; i < half; i++) {
                    const double a = rndf() * 7.0;
                    cs[i] = (float)cos(a), sn[i] = (float)sin(a);
                }
                const rope_style st = style ? ROPE_INTERLEAVED : ROPE_HALVES;
                CHECK(tt_set_isa(ISA_SCALAR));
                f16_to_f32_row_scalar(src, row, hd);
                rope_rotate(tt(), row, 1, hd, rot, 0, half, cs, sn, st);
                f32_to_f16_row_scalar(row, want, hd);
                rope_rotate_f16_scalar(src, got, hd, rot, cs, sn, st);
                CHECK_MSG(memcmp(want, got, 2 * (size_t)hd) == 0, "rope_rotate_f16_scalar hd=%d rot=%d style=%d", hd, rot, style);
                for (int isa = 0; isa <= (int)cpu_best_isa(); isa++) {
                    CHECK(tt_set_isa((cpu_isa)isa));
                    memcpy(got, src, sizeof src);
                    rope_rotate_f16(tt(), got, got, hd, rot, cs, sn, st); /* in place */
                    CHECK_MSG(memcmp(want, got, 2 * (size_t)hd) == 0, "rope_rotate_f16 hd=%d rot=%d style=%d isa=%s", hd,
                              rot, style, cpu_isa_name((cpu_isa)isa));
                }
                tt_set_isa(saved);
            }
}

static void test_sum_words(void) {
    const cpu_isa saved = tt()->isa;
    for (size_t n = 0; n < 300; n += 1 + n / 4) {
        uint64_t *p = malloc(8 * (n + 1));
        for (size_t i = 0; i < n; i++) p[i] = (uint64_t)rnd() << 40 ^ rnd();
        uint64_t want = 0;
        for (size_t i = 0; i < n; i++) want += p[i];
        CHECK(bench_sum_words_scalar(p, n) == want);
        for (int isa = 0; isa <= (int)cpu_best_isa(); isa++) {
            CHECK(tt_set_isa((cpu_isa)isa));
            for (int style = PREFETCH_OFF; style <= PREFETCH_LAST; style++) {
                tt_set_prefetch((cpu_prefetch)style);
                for (int pre = 0; pre < 2; pre++)
                    CHECK_MSG(bench_sum_words(tt(), p + (n > 2), n - (n > 2) * 2 + (n > 2), pre) ==
                                  bench_sum_words_scalar(p + (n > 2), n - (n > 2) * 2 + (n > 2)),
                              "sum n=%zu prefetch %d style %d", n, pre, style);
                tt_reset_prefetch();
            }
        }
        tt_set_isa(saved);
        free(p);
    }
    wick_error err;
    CHECK(bench_membw(1 << 20, 2, 1, &err) > 0);
    CHECK(bench_membw(100, 2, 1, &err) < 0); /* under 512 bytes: an error, not a division by zero */
    bench_membw_buf *b = bench_membw_new(1 << 20, 2, &err);
    CHECK(b != NULL);
    for (int i = 0; b && i < 3; i++) CHECK(bench_membw_read(b, 2) > 0); /* the buffer is kept between readings */
    bench_membw_free(b);
    bench_membw_free(NULL);
    CHECK(bench_peak_rss() > 0);
}

static void test_matmul_multi(void) {
    static const int TYPES[] = {WICK_F32, WICK_F16, WICK_BF16, WICK_Q8_0, WICK_Q4_0};
    static const int ROWS[][3] = {{64, 16, 16}, {17, 5, 33}, {1, 1, 1}, {96, 32, 7}};
    static const int NS[] = {1, 2, 3, 5, 9};
    wick_error err;
    wick_pool *pools[3] = {NULL, pool_new(2, &err), pool_new(3, &err)};
    for (int ti = 0; ti < 5; ti++)
        for (int ri = 0; ri < 4; ri++)
            for (int ni = 0; ni < 5; ni++) {
                const int type = TYPES[ti], cols = (type == WICK_Q8_0 || type == WICK_Q4_0) ? 96 : 37, n = NS[ni];
                wick_tensor W[3];
                const wick_tensor *pw[3];
                float *y0[3], *y1[3];
                int ld[3];
                for (int k = 0; k < 3; k++) {
                    const int rows = ROWS[ri][k];
                    float *wf = malloc(sizeof(float) * (size_t)rows * cols);
                    for (int i = 0; i < rows * cols; i++) wf[i] = rndf();
                    size_t rb = dtype_row_bytes(type, cols);
                    void *wd = malloc(rb * (size_t)rows);
                    for (int r = 0; r < rows; r++) {
                        if (type == WICK_F32) memcpy((char *)wd + r * rb, wf + (size_t)r * cols, rb);
                        else if (type == WICK_F16) f32_to_f16_row_scalar(wf + (size_t)r * cols, (uint16_t *)((char *)wd + r * rb), cols);
                        else if (type == WICK_BF16)
                            for (int c = 0; c < cols; c++) ((uint16_t *)((char *)wd + r * rb))[c] = f32_to_bf16(wf[(size_t)r * cols + c]);
                        else quantize_row(type, wf + (size_t)r * cols, (char *)wd + r * rb, cols);
                    }
                    free(wf);
                    W[k] = (wick_tensor){"w", type, 2, {cols, rows, 1, 1}, wd, rb * (size_t)rows};
                    pw[k] = &W[k];
                    ld[k] = rows + k;
                    y0[k] = calloc((size_t)n * ld[k], sizeof(float));
                    y1[k] = calloc((size_t)n * ld[k], sizeof(float));
                }
                float *x = malloc(sizeof(float) * (size_t)n * cols);
                for (int i = 0; i < n * cols; i++) x[i] = rndf();
                size_t sb = matmul_scratch_bytes(type, cols, n);
                void *scratch = malloc(sb ? sb : 1);
                for (int k = 0; k < 3; k++) matmul(tt(), NULL, pw[k], x, n, y0[k], ld[k], scratch);
                for (int p = 0; p < 3; p++) {
                    for (int k = 0; k < 3; k++) memset(y1[k], 0, sizeof(float) * (size_t)n * ld[k]);
                    matmul_multi(tt(), pools[p], pw, 3, x, n, y1, ld, scratch);
                    for (int k = 0; k < 3; k++)
                        CHECK_MSG(memcmp(y0[k], y1[k], sizeof(float) * (size_t)n * ld[k]) == 0,
                                  "matmul_multi %s rows %d n=%d threads %d matrix %d", dtype_name(type), ROWS[ri][k], n, p + 1, k);
                }
                for (int k = 0; k < 3; k++) free((void *)W[k].data), free(y0[k]), free(y1[k]);
                free(x), free(scratch);
            }
    pool_free(pools[1]);
    pool_free(pools[2]);
}

/* Last-position logits of `prompt` (token ids) with the given KV type. */
static float *logits_of(wick_model *m, const int32_t *ids, int n, int kv_type, int chunk) {
    wick_error err;
    wick_context_params cp = {.n_ctx = 256, .n_seq = 1, .n_threads = 2, .prefill_chunk = chunk, .kv_type = kv_type};
    wick_context *c = wick_context_new(m, &cp, &err);
    CHECK_MSG(c != NULL, "%s", err.msg);
    if (!c) return NULL;
    int32_t pos[256], seq[256] = {0};
    for (int i = 0; i < n; i++) pos[i] = i;
    float *out = NULL;
    int step = chunk > 0 ? chunk : n;
    for (int i = 0; i < n; i += step) {
        wick_batch b = {.n = n - i < step ? n - i : step, .tokens = ids + i, .pos = pos + i, .seq = seq + i};
        int rc = wick_decode(c, &b, &err);
        CHECK_MSG(rc == 0, "%s", err.msg);
        if (rc) goto done;
    }
    wick_model_info info;
    wick_model_get_info(m, &info);
    out = malloc(sizeof(float) * (size_t)info.n_vocab);
    memcpy(out, wick_logits(c, 0), sizeof(float) * (size_t)info.n_vocab);
done:
    wick_context_free(c);
    return out;
}

static int argmax(const float *x, int n) {
    int b = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > x[b]) b = i;
    return b;
}

static void compare_logits(const char *what, const float *a, const float *b, int n, double rel_tol,
                           double min_cos) {
    double mx = 0, diff = 0, dot = 0, na = 0, nb = 0;
    for (int i = 0; i < n; i++) {
        if (fabs(a[i]) > mx) mx = fabs(a[i]);
        if (fabs(a[i] - b[i]) > diff) diff = fabs(a[i] - b[i]);
        dot += (double)a[i] * b[i], na += (double)a[i] * a[i], nb += (double)b[i] * b[i];
    }
    double cos = dot / sqrt(na * nb + 1e-300);
    if (rel_tol > 0) CHECK_MSG(diff <= rel_tol * mx, "%s: max diff %g vs max |logit| %g", what, diff, mx);
    CHECK_MSG(cos >= min_cos, "%s: cosine %.6f", what, cos);
    CHECK_MSG(argmax(a, n) == argmax(b, n), "%s: top-1 %d vs %d", what, argmax(a, n), argmax(b, n));
}

static void kv_f16_case(const char *path, const char *what) {
    wick_error err;
    wick_model *m = wick_model_load(path, NULL, &err);
    CHECK_MSG(m != NULL, "%s: %s", what, err.msg);
    if (!m) return;
    wick_model_info info;
    wick_model_get_info(m, &info);
    int32_t ids[100];
    for (int i = 0; i < 100; i++) ids[i] = (int32_t)(rnd() % (uint32_t)info.tokenizer_vocab);
    for (int chunk = 0; chunk <= 7; chunk += 7) {
        float *a = logits_of(m, ids, 100, 0, chunk), *b = logits_of(m, ids, 100, 1, chunk);
        if (a && b) compare_logits(what, a, b, info.n_vocab, 2e-2, 0.9999);
        free(a), free(b);
    }
    wick_model_free(m);
}

static char tmpdir[64];

static const char *tiny(const char *arch, const char *fmt, const char *dtype, char *buf, size_t cap) {
    snprintf(buf, cap, "%s/%s-%s-%s%s", tmpdir, arch, fmt, dtype, strcmp(fmt, "gguf") == 0 ? ".gguf" : "");
    test_model_params p = {.arch = arch, .format = fmt, .shape = "tiny", .dtype = dtype, .seed = 7, .out = buf};
    wick_error err;
    int rc = make_test_model(&p, &err);
    CHECK_MSG(rc == 0, "make_test_model %s: %s", buf, err.msg);
    return rc == 0 ? buf : NULL;
}

static void test_kv_f16(void) {
    const char *stories = shared_path("models/stories260K/stories260K-f32.gguf");
    if (stories) kv_f16_case(stories, "stories260K f16 KV");
    else SKIP_PART("F16 KV on stories260K: models/stories260K not found in the shared folder");
    static const char *ARCHS[] = {"llama", "mistral", "qwen2", "qwen3", "qwen3moe"};
    char buf[256];
    for (int a = 0; a < 5; a++) {
        const char *p = tiny(ARCHS[a], "gguf", "f32", buf, sizeof buf);
        if (p) kv_f16_case(p, ARCHS[a]);
    }
}

static void test_dtype(void) {
    static const char *ARCHS[] = {"qwen2", "qwen3", "llama"};
    static const char *TO[] = {"q8_0", "q4_0"};
    char hf[256], gg[256];
    for (int a = 0; a < 3; a++)
        for (int t = 0; t < 2; t++) {
            const char *src = tiny(ARCHS[a], "hf", "bf16", hf, sizeof hf);
            const char *ref = tiny(ARCHS[a], "gguf", TO[t], gg, sizeof gg);
            if (!src || !ref) continue;
            wick_error err;
            wick_model_params mp = {.dtype = TO[t]};
            wick_model *m1 = wick_model_load(src, &mp, &err);
            CHECK_MSG(m1 != NULL, "%s", err.msg);
            wick_model *m2 = wick_model_load(ref, NULL, &err);
            CHECK_MSG(m2 != NULL, "%s", err.msg);
            if (m1 && m2) {
                wick_model_info i1;
                wick_model_get_info(m1, &i1);
                CHECK(i1.converted_to && strcmp(i1.converted_to, TO[t][1] == '8' ? "Q8_0" : "Q4_0") == 0);
                int32_t ids[40];
                for (int i = 0; i < 40; i++) ids[i] = (int32_t)(rnd() % (uint32_t)i1.tokenizer_vocab);
                char what[128];
                snprintf(what, sizeof what, "%s hf bf16 --dtype %s vs gguf %s", ARCHS[a], TO[t], TO[t]);
                float *la = logits_of(m2, ids, 40, 0, 0), *lb = logits_of(m1, ids, 40, 0, 0);
                if (la && lb) compare_logits(what, la, lb, i1.n_vocab, 0, t == 0 ? 0.999 : 0.995);
                free(la), free(lb);
            }
            wick_model_free(m1);
            wick_model_free(m2);
        }
    /* from f32 at load: bit-identical logits to the file make-test-model
     * quantized / converted from the same f32 weights */
    static const char *EXACT[] = {"q8_0", "q4_0", "f16"};
    for (int t = 0; t < 3; t++) {
        const char *src = tiny("qwen2", "hf", "f32", hf, sizeof hf), *ref = tiny("qwen2", "gguf", EXACT[t], gg, sizeof gg);
        wick_error err;
        wick_model_params mp = {.dtype = EXACT[t]};
        wick_model *m1 = src ? wick_model_load(src, &mp, &err) : NULL, *m2 = ref ? wick_model_load(ref, NULL, &err) : NULL;
        CHECK(m1 && m2);
        if (m1 && m2) {
            int32_t ids[5] = {1, 2, 3, 50, 7};
            float *la = logits_of(m1, ids, 5, 0, 0), *lb = logits_of(m2, ids, 5, 0, 0);
            wick_model_info info;
            wick_model_get_info(m1, &info);
            CHECK_MSG(la && lb && memcmp(la, lb, sizeof(float) * (size_t)info.n_vocab) == 0, "hf f32 --dtype %s", EXACT[t]);
            free(la), free(lb);
        }
        wick_model_free(m1);
        wick_model_free(m2);
    }
    /* mixture of experts: GGUF expert stacks (and HF per-expert matrices)
     * converted at load whole, the router kept in F32 as make-test-model
     * keeps it: bit-identical to the quantized file */
    static const char *const MOE[][2] = {{"qwen3moe", "gguf"}, {"qwen2moe", "gguf"}, {"mixtral", "gguf"}, {"qwen3moe", "hf"}};
    for (int a = 0; a < 4; a++)
        for (int t = 0; t < 2; t++) {
            const char *src = tiny(MOE[a][0], MOE[a][1], "f32", hf, sizeof hf), *ref = tiny(MOE[a][0], "gguf", EXACT[t], gg, sizeof gg);
            wick_error err;
            wick_model_params mp = {.dtype = EXACT[t]};
            wick_model *m1 = src ? wick_model_load(src, &mp, &err) : NULL, *m2 = ref ? wick_model_load(ref, NULL, &err) : NULL;
            CHECK(m1 && m2);
            if (m1 && m2) {
                int32_t ids[7] = {1, 2, 3, 50, 7, 9, 11};
                float *la = logits_of(m1, ids, 7, 0, 0), *lb = logits_of(m2, ids, 7, 0, 0);
                wick_model_info info;
                wick_model_get_info(m1, &info);
                CHECK_MSG(la && lb && memcmp(la, lb, sizeof(float) * (size_t)info.n_vocab) == 0, "%s %s f32 --dtype %s",
                          MOE[a][0], MOE[a][1], EXACT[t]);
                free(la), free(lb);
            }
            wick_model_free(m1);
            wick_model_free(m2);
        }
    /* f16 from f32 at load gives the same logits as an f16 file of the same seed */
    const char *src = tiny("qwen2", "gguf", "f32", hf, sizeof hf), *ref = tiny("qwen2", "gguf", "f16", gg, sizeof gg);
    wick_error err;
    wick_model_params mp = {.dtype = "f16"};
    wick_model *m1 = src ? wick_model_load(src, &mp, &err) : NULL, *m2 = ref ? wick_model_load(ref, NULL, &err) : NULL;
    CHECK(m1 && m2);
    if (m1 && m2) {
        int32_t ids[3] = {1, 2, 3};
        float *a = logits_of(m1, ids, 3, 0, 0), *b = logits_of(m2, ids, 3, 0, 0);
        wick_model_info info;
        wick_model_get_info(m1, &info);
        CHECK(a && b && memcmp(a, b, sizeof(float) * (size_t)info.n_vocab) == 0);
        free(a), free(b);
    }
    wick_model_free(m1);
    wick_model_free(m2);
    /* an unknown dtype is an error that lists the choices */
    mp.dtype = "q7_k";
    CHECK(src && !wick_model_load(src, &mp, &err) && strstr(err.msg, "q7_k") && strstr(err.msg, "iq4_xs"));
    /* rows no block of the type divides fall back per tensor as llama-quantize does
     * (stories260K's FFN is 172 wide: its ffn_down becomes F16; the other rows are 64
     * wide, so Q4_K becomes Q5_0 and Q6_K Q8_0): the model loads and stays close to F32 */
    const char *stories = shared_path("models/stories260K/stories260K-f32.gguf");
    if (stories) {
        static const char *FB[] = {"q8_0", "q4_k", "q6_k", "iq4_xs", "q2_k"};
        static const double FB_COS[] = {0.999, 0.99, 0.999, 0.99, 0.99};
        wick_model *f32 = wick_model_load(stories, NULL, &err);
        int32_t ids[6] = {1, 403, 407, 261, 378, 432};
        float *lf = f32 ? logits_of(f32, ids, 6, 0, 0) : NULL;
        for (int k = 0; k < 5; k++) {
            mp.dtype = FB[k];
            wick_model *m = wick_model_load(stories, &mp, &err);
            CHECK_MSG(m != NULL, "stories260K --dtype %s: %s", FB[k], m ? "" : err.msg);
            float *lq = m ? logits_of(m, ids, 6, 0, 0) : NULL;
            char what[64];
            snprintf(what, sizeof what, "stories260K --dtype %s vs f32", FB[k]);
            if (lf && lq) compare_logits(what, lf, lq, 512, 0, FB_COS[k]);
            free(lq);
            wick_model_free(m);
        }
        free(lf);
        wick_model_free(f32);
    } else {
        SKIP_PART("--dtype fallbacks on stories260K: models/stories260K not found in the shared folder");
    }
}

static void test_profile(void) {
    char buf[256];
    const char *p = tiny("qwen3", "gguf", "q8_0", buf, sizeof buf);
    if (!p) return;
    wick_error err;
    wick_model *m = wick_model_load(p, NULL, &err);
    wick_context_params cp = {.n_ctx = 64, .n_threads = 2, .prefill_chunk = 4};
    wick_context *c = m ? wick_context_new(m, &cp, &err) : NULL;
    CHECK(c != NULL);
    if (c) {
        wick_context_set_profiling(c, true);
        wick_context_profile_reset(c);
        int32_t ids[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, pos[10], seq[10] = {0};
        for (int i = 0; i < 10; i++) pos[i] = i;
        wick_batch b = {.n = 4, .tokens = ids, .pos = pos, .seq = seq};
        CHECK(wick_decode(c, &b, &err) == 0);
        wick_profile pr;
        wick_context_profile(c, &pr);
        CHECK(pr.n_forward == 1 && pr.n_tokens == 4);
        for (int op = 0; op < WICK_OP_COUNT; op++) CHECK(pr.ms[op] >= 0);
        CHECK(strcmp(wick_op_name(WICK_OP_MATMUL), "matmul") == 0);
        wick_context_set_profiling(c, false);
        b.tokens = ids + 4, b.pos = pos + 4;
        CHECK(wick_decode(c, &b, &err) == 0);
        wick_context_profile(c, &pr);
        CHECK(pr.n_forward == 1);
    }
    wick_context_free(c);
    wick_model_free(m);
}

int main(void) {
    SKIP_ISAS_THIS_CPU_LACKS();
    snprintf(tmpdir, sizeof tmpdir, "/tmp/wick-perf-XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    RUN(test_f16_row);
    RUN(test_rope_f16);
    RUN(test_sum_words);
    RUN(test_matmul_multi);
    RUN(test_kv_f16);
    RUN(test_dtype);
    RUN(test_profile);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    return check_summary("perf");
}
