/* test_convert.c — wick quantize / wick convert as library calls
 * (src/tools/): llama-quantize's per-tensor type rules on model
 * descriptions, and whole files written from GGUF and HF inputs.
 *
 * Checks and tolerances (stated where used):
 *   - the rules: exact types per tensor (Q4_K_M's use_more_bits layers, the
 *     tied embedding, GQA and 8-expert cases, fallbacks, --pure, overrides).
 *   - quantize: every mix from GGUF and HF inputs loads in wick with the
 *     types the rules give and general.file_type set; the bytes do not depend
 *     on the thread count; a legacy-type file equals make-test-model's file of
 *     that type (both quantize the same F32 weights with quantize_row).
 *   - convert: an HF model written as F32 GGUF computes the same logits as the
 *     HF directory itself (max |Δ| <= 1e-5 × max|logit|: llama's q/k rows are
 *     permuted, so RoPE runs in the other pair layout, same values in another
 *     float order; the Qwen archs are bit-identical), tokenizes the same, and
 *     keeps generation_config.json's sampling values.
 *   - convert, every other arch (granite, gemma2, gemma3, phi3 with and
 *     without LongRoPE, qwen2moe, qwen3moe, mixtral): the HF test model
 *     written as GGUF holds exactly make-test-model's GGUF of the same seed
 *     (same names, types, shapes and bytes: Gemma's norms back at 1 + w,
 *     experts stacked, LongRoPE factors as tensors) and computes bit-identical
 *     logits to it; against the HF directory itself max |Δ| <= 1e-5 ×
 *     max|logit| as above. Gemma 3's multimodal layout (text_config, the text
 *     model under either prefix, a vision tensor) converts to the same file.
 *     Config values only some GGUF keys carry (Gemma's query_pre_attn_scalar,
 *     its default tie, qwen3moe's norm_topk_prob false, Phi-3's partial
 *     rotation) keep the HF logits; dense layers in a MoE model and another
 *     sliding-layer pattern than the arch's are clear errors.
 *   - quantize from HF, Q4_K_M on tiny256 (K-quants apply) for the MoE archs,
 *     gemma2 and phi3: the same bytes as quantizing make-test-model's GGUF.
 *   - errors: unknown type or outtype, missing input, HF directory without
 *     config.json, unwritable output, output == input: one message each, and
 *     no output file left behind. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "core/fileio.h"
#include "core/json_util.h"
#include "format/safetensors.h"
#include "core/tensor.h"
#include "format/gguf.h"
#include "cli/testmodel.h"
#include "tools/quant_mix.h"
#include "tools/quantize.h"
#include "wick.h"

static char tmpdir[64];

static const char *tmp(const char *name) {
    static char buf[8][256];
    static int k;
    char *b = buf[k++ & 7];
    snprintf(b, sizeof buf[0], "%s/%s", tmpdir, name);
    return b;
}

static int make_opt(const char *arch, const char *fmt, const char *shape, const char *dtype, const char *rope_scaling,
                    const char *mlp_only, const char *out) {
    wick_error err;
    test_model_params p = {.arch = arch, .format = fmt, .shape = shape, .dtype = dtype, .seed = 5, .out = out,
                           .rope_scaling = rope_scaling, .mlp_only_layers = mlp_only};
    const int rc = make_test_model(&p, &err);
    CHECK_MSG(rc == 0, "make_test_model %s: %s", out, err.msg);
    return rc;
}

static int make(const char *arch, const char *fmt, const char *shape, const char *dtype, const char *out) {
    return make_opt(arch, fmt, shape, dtype, NULL, NULL, out);
}

/* ---- the rules ---- */

static int type_of(const char *mix, const quant_model *m, const char *name, int64_t ne0) {
    const quant_choice c = {.mix = quant_mix_find(mix), .output_type = -1, .embd_type = -1};
    return c.mix ? quant_tensor_type(&c, m, name, ne0, NULL) : -1;
}

static void test_rules(void) {
    CHECK(quant_mix_find("q4_k_m") == quant_mix_find("Q4_K") && quant_mix_find("Q4_K_M") != NULL);
    CHECK(quant_mix_find("Q4_K_X") == NULL && quant_mix_find("IQ2_XXS") == NULL);
    /* a 32-layer Llama-3-8B-like model: 32 heads, 8 KV heads (GQA 4), its own output */
    const quant_model l8 = {32, 32, 8, 0, true};
    char name[64];
    int six = 0;
    for (int il = 0; il < 32; il++) {
        /* use_more_bits: layers 0-3, 28-31, and 4 + 3k + 2 */
        const bool more = il < 4 || il >= 28 || (il - 4) % 3 == 2;
        snprintf(name, sizeof name, "blk.%d.attn_v.weight", il);
        CHECK_INT(type_of("Q4_K_M", &l8, name, 4096), more ? WICK_Q6_K : WICK_Q4_K);
        snprintf(name, sizeof name, "blk.%d.ffn_down.weight", il);
        CHECK_INT(type_of("Q4_K_M", &l8, name, 14336), more ? WICK_Q6_K : WICK_Q4_K);
        six += more;
        snprintf(name, sizeof name, "blk.%d.attn_q.weight", il);
        CHECK_INT(type_of("Q4_K_M", &l8, name, 4096), WICK_Q4_K);
        /* Q4_K_S: attn_v of the first 4 layers, ffn_down of the first eighth at Q5_K */
        snprintf(name, sizeof name, "blk.%d.attn_v.weight", il);
        CHECK_INT(type_of("Q4_K_S", &l8, name, 4096), il < 4 ? WICK_Q5_K : WICK_Q4_K);
        /* Q3_K_M: attn_v Q5_K for layers 0-1 then Q4_K; Q2_K with GQA 4: attn_v Q4_K */
        CHECK_INT(type_of("Q3_K_M", &l8, name, 4096), il < 2 ? WICK_Q5_K : WICK_Q4_K);
        CHECK_INT(type_of("Q2_K", &l8, name, 4096), WICK_Q4_K);
        CHECK_INT(type_of("IQ4_XS", &l8, name, 4096), WICK_Q5_K);
        snprintf(name, sizeof name, "blk.%d.attn_output.weight", il);
        CHECK_INT(type_of("Q2_K", &l8, name, 4096), WICK_Q3_K);
        CHECK_INT(type_of("Q3_K_L", &l8, name, 4096), WICK_Q5_K);
    }
    CHECK_INT(six, 16); /* 0-3, 6, 9, ..., 27, 28-31 */
    CHECK_INT(type_of("Q4_K_M", &l8, "output.weight", 4096), WICK_Q6_K);
    CHECK_INT(type_of("Q4_K_M", &l8, "token_embd.weight", 4096), WICK_Q4_K);
    CHECK_INT(type_of("Q8_0", &l8, "output.weight", 4096), WICK_Q8_0);
    CHECK_INT(type_of("Q4_0", &l8, "output.weight", 4096), WICK_Q6_K);
    CHECK_INT(type_of("F16", &l8, "output.weight", 4096), WICK_F16);
    /* a tied embedding is the output: Q6_K */
    const quant_model qw = {24, 14, 2, 0, false};
    CHECK_INT(type_of("Q4_K_M", &qw, "token_embd.weight", 1024), WICK_Q6_K);
    /* 896-wide rows (Qwen2.5-0.5B): no K-quant fits; llama.cpp's fallbacks */
    CHECK_INT(type_of("Q4_K_M", &qw, "token_embd.weight", 896), WICK_Q8_0);
    CHECK_INT(type_of("Q4_K_M", &qw, "blk.3.attn_q.weight", 896), WICK_Q5_0);
    CHECK_INT(type_of("Q4_K_M", &qw, "blk.0.attn_v.weight", 896), WICK_Q8_0); /* Q6_K -> Q8_0 */
    CHECK_INT(type_of("Q5_K_S", &qw, "blk.3.attn_q.weight", 896), WICK_Q5_1);
    CHECK_INT(type_of("Q3_K_S", &qw, "blk.3.attn_q.weight", 896), WICK_Q4_0);
    CHECK_INT(type_of("IQ4_XS", &qw, "blk.3.attn_q.weight", 896), WICK_IQ4_NL);
    CHECK_INT(type_of("Q4_K_M", &qw, "blk.3.ffn_down.weight", 4864), WICK_Q4_K); /* 4864 = 19 × 256: fits */
    CHECK_INT(type_of("Q4_K_M", &qw, "blk.5.ffn_down.weight", 172), WICK_F16);   /* not even 32 */
    /* 8 experts (Mixtral): attn_v / attn_k Q8_0, attn_output Q5_K; expert tensors by their layer */
    const quant_model mx = {32, 32, 8, 8, true};
    CHECK_INT(type_of("Q4_K_M", &mx, "blk.9.attn_v.weight", 4096), WICK_Q8_0);
    CHECK_INT(type_of("Q4_K_M", &mx, "blk.9.attn_k.weight", 4096), WICK_Q8_0);
    CHECK_INT(type_of("Q4_K_M", &mx, "blk.9.attn_output.weight", 4096), WICK_Q5_K);
    CHECK_INT(type_of("Q4_K_M", &mx, "blk.1.ffn_down_exps.weight", 14336), WICK_Q6_K);
    CHECK_INT(type_of("Q4_K_M", &mx, "blk.5.ffn_down_exps.weight", 14336), WICK_Q4_K);
    CHECK_INT(type_of("Q4_K_M", &mx, "blk.5.ffn_gate_exps.weight", 4096), WICK_Q4_K);
    /* 80 layers with GQA: attn_v one step up */
    const quant_model l70 = {80, 64, 8, 0, true};
    CHECK_INT(type_of("Q3_K_M", &l70, "blk.40.attn_v.weight", 8192), WICK_Q5_K);
    CHECK_INT(type_of("Q4_K_S", &l70, "blk.40.attn_v.weight", 8192), WICK_Q5_K);
    /* a fused attn_qkv takes attn_v's rules */
    CHECK_INT(type_of("Q4_K_M", &l8, "blk.0.attn_qkv.weight", 3072), WICK_Q6_K);
    /* pure and overrides */
    quant_choice c = {.mix = quant_mix_find("Q4_K_M"), .pure = true, .output_type = -1, .embd_type = -1};
    CHECK_INT(quant_tensor_type(&c, &l8, "blk.0.attn_v.weight", 4096, NULL), WICK_Q4_K);
    CHECK_INT(quant_tensor_type(&c, &l8, "output.weight", 4096, NULL), WICK_Q4_K);
    CHECK_INT(quant_tensor_type(&c, &l8, "blk.0.attn_v.weight", 896, NULL), WICK_Q5_0); /* still falls back */
    c.pure = false;
    c.output_type = WICK_Q8_0;
    c.embd_type = WICK_Q2_K;
    CHECK_INT(quant_tensor_type(&c, &l8, "output.weight", 4096, NULL), WICK_Q8_0);
    CHECK_INT(quant_tensor_type(&c, &l8, "token_embd.weight", 4096, NULL), WICK_Q2_K);
    CHECK_INT(quant_tensor_type(&c, &qw, "token_embd.weight", 1024, NULL), WICK_Q2_K); /* tied: embd wins */
    int wanted = -1;
    CHECK_INT(quant_tensor_type(&c, &qw, "blk.0.attn_q.weight", 896, &wanted), WICK_Q5_0);
    CHECK_INT(wanted, WICK_Q4_K);
    /* what is a matrix */
    CHECK(quant_tensor_is_matrix("blk.0.attn_q.weight", 2) && quant_tensor_is_matrix("blk.0.ffn_up_exps.weight", 3));
    CHECK(!quant_tensor_is_matrix("blk.0.attn_norm.weight", 1) && !quant_tensor_is_matrix("blk.0.attn_q.bias", 2));
    CHECK(!quant_tensor_is_matrix("blk.0.ffn_gate_inp.weight", 2) && !quant_tensor_is_matrix("blk.0.attn_q_norm.weight", 2));
}

/* ---- files ---- */

/* Tensor `name`'s type in a GGUF file; -1 if absent. */
static int file_type_of(const gguf_file *f, const char *name) {
    const wick_tensor *t = gguf_find_tensor(f, name);
    return t ? t->type : -1;
}

static float *logits(const char *path, const char *text, int *n_vocab, int32_t *ids, int *n_ids) {
    wick_error err;
    wick_model *m = wick_model_load(path, NULL, &err);
    CHECK_MSG(m != NULL, "load %s: %s", path, m ? "" : err.msg);
    if (!m) return NULL;
    wick_model_info info;
    wick_model_get_info(m, &info);
    *n_vocab = info.n_vocab;
    *n_ids = wick_tokenize(m, text, strlen(text), true, ids, 64, &err);
    wick_context_params cp = {.n_ctx = 128, .n_seq = 1, .n_threads = 2};
    wick_context *c = wick_context_new(m, &cp, &err);
    float *out = NULL;
    if (c && *n_ids > 0) {
        int32_t pos[64], seq[64] = {0};
        for (int i = 0; i < *n_ids; i++) pos[i] = i;
        wick_batch b = {.n = *n_ids, .tokens = ids, .pos = pos, .seq = seq};
        if (wick_decode(c, &b, &err) == 0) {
            const float *l = wick_logits(c, 0);
            out = malloc(sizeof(float) * (size_t)info.n_vocab);
            if (out && l) memcpy(out, l, sizeof(float) * (size_t)info.n_vocab);
        }
    }
    CHECK_MSG(out != NULL, "logits of %s", path);
    wick_context_free(c);
    wick_model_free(m);
    return out;
}

static void test_quantize_gguf(void) {
    char src[256];
    snprintf(src, sizeof src, "%s", tmp("ll256.gguf"));
    if (make("llama", "gguf", "tiny256", "f32", src) < 0) return;
    static const char *MIXES[] = {"Q2_K", "Q3_K_S", "Q3_K_M", "Q3_K_L", "Q4_K_S", "Q4_K_M", "Q5_K_S", "Q5_K_M",
                                  "Q6_K", "IQ4_NL", "IQ4_XS", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "F16", "BF16", "Q2_K_S"};
    wick_error err;
    gguf_file *in = gguf_open(src, &err);
    CHECK(in != NULL);
    if (!in) return;
    const quant_model qm = {2, 4, 2, 0, true};
    for (size_t k = 0; k < sizeof MIXES / sizeof MIXES[0]; k++) {
        char out[256];
        snprintf(out, sizeof out, "%s", tmp("q.gguf"));
        quantize_params p = {.type = MIXES[k], .n_threads = 2};
        quantize_report r;
        CHECK_MSG(model_quantize(src, out, &p, &r, &err) == 0, "quantize %s: %s", MIXES[k], err.msg);
        gguf_file *f = gguf_open(out, &err);
        CHECK_MSG(f != NULL, "%s: %s", MIXES[k], err.msg);
        if (!f) continue;
        int64_t ft = -1;
        CHECK(gguf_get_int(f, "general.file_type", &ft, &err) == 1 && ft == quant_mix_find(MIXES[k])->ftype);
        const quant_choice c = {.mix = quant_mix_find(MIXES[k]), .output_type = -1, .embd_type = -1};
        int bad = 0;
        for (int i = 0; i < gguf_n_tensors(in); i++) {
            const wick_tensor *t = gguf_tensor(in, i);
            const int want = quant_tensor_is_matrix(t->name, t->n_dims) ? quant_tensor_type(&c, &qm, t->name, t->ne[0], NULL)
                                                                        : t->type;
            bad += file_type_of(f, t->name) != want;
        }
        CHECK_MSG(bad == 0, "%s: %d tensors of another type than the rules give", MIXES[k], bad);
        CHECK_INT(r.n_tensors, gguf_n_tensors(in));
        gguf_close(f);
        wick_model *m = wick_model_load(out, NULL, &err);
        CHECK_MSG(m != NULL, "load %s: %s", MIXES[k], m ? "" : err.msg);
        wick_model_free(m);
    }
    gguf_close(in);
    /* --pure: every matrix in the base type */
    quantize_params pure = {.type = "Q4_K_M", .pure = true, .output_type = "q8_0"};
    CHECK(model_quantize(src, tmp("pure.gguf"), &pure, NULL, &err) == 0);
    gguf_file *f = gguf_open(tmp("pure.gguf"), &err);
    CHECK(f && file_type_of(f, "blk.1.attn_v.weight") == WICK_Q4_K && file_type_of(f, "blk.1.ffn_down.weight") == WICK_Q4_K &&
          file_type_of(f, "output.weight") == WICK_Q8_0 && file_type_of(f, "blk.0.attn_norm.weight") == WICK_F32);
    gguf_close(f);
    /* the thread count does not change a byte; requantizing a quantized input works */
    quantize_params p1 = {.type = "Q4_K_M", .n_threads = 1}, p3 = {.type = "Q4_K_M", .n_threads = 3};
    CHECK(model_quantize(src, tmp("t1.gguf"), &p1, NULL, &err) == 0 && model_quantize(src, tmp("t3.gguf"), &p3, NULL, &err) == 0);
    size_t n1 = 0, n3 = 0;
    char *b1 = file_read_all(tmp("t1.gguf"), &n1, &err), *b3 = file_read_all(tmp("t3.gguf"), &n3, &err);
    CHECK(b1 && b3 && n1 == n3 && memcmp(b1, b3, n1) == 0);
    free(b1), free(b3);
    quantize_params rq = {.type = "Q3_K_M"};
    CHECK(model_quantize(tmp("t1.gguf"), tmp("rq.gguf"), &rq, NULL, &err) == 0);
    /* legacy types: the bytes make-test-model writes from the same F32 weights */
    static const char *LEGACY[] = {"q8_0", "q4_0", "q4_1", "q5_0", "q5_1"};
    for (int k = 0; k < 5; k++) {
        char ref[256];
        snprintf(ref, sizeof ref, "%s", tmp("legacy-ref.gguf"));
        if (make("llama", "gguf", "tiny256", LEGACY[k], ref) < 0) continue;
        quantize_params p = {.type = LEGACY[k], .pure = true};
        CHECK(model_quantize(src, tmp("legacy.gguf"), &p, NULL, &err) == 0);
        gguf_file *a = gguf_open(ref, &err), *b = gguf_open(tmp("legacy.gguf"), &err);
        int diff = 0;
        for (int i = 0; a && b && i < gguf_n_tensors(a); i++) {
            const wick_tensor *ta = gguf_tensor(a, i), *tb = gguf_find_tensor(b, ta->name);
            diff += !tb || tb->nbytes != ta->nbytes || memcmp(ta->data, tb->data, ta->nbytes) != 0;
        }
        CHECK_MSG(a && b && diff == 0, "%s: %d tensors differ from make-test-model's", LEGACY[k], diff);
        gguf_close(a);
        gguf_close(b);
    }
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static bool absent(const char *path) {
    struct stat st;
    return stat(path, &st) != 0;
}

static void test_convert_hf(void) {
    static const char *ARCHS[] = {"llama", "qwen2", "qwen3", "mistral"};
    const char *text = "Once upon a time, a small robot";
    wick_error err;
    for (int a = 0; a < 4; a++) {
        char dir[128];
        snprintf(dir, sizeof dir, "%s/hf-%s", tmpdir, ARCHS[a]);
        if (make(ARCHS[a], "hf", "tiny", "f32", dir) < 0) continue;
        if (a == 0) {
            char p[256];
            snprintf(p, sizeof p, "%s/generation_config.json", dir);
            write_text(p, "{\"temperature\": 0.6, \"top_k\": 20, \"top_p\": 0.9, \"repetition_penalty\": 1.1}\n");
        }
        char out[256];
        snprintf(out, sizeof out, "%s", tmp("conv.gguf"));
        quantize_report r;
        CHECK_MSG(model_convert(dir, out, "auto", 2, NULL, NULL, &r, &err) == 0, "convert %s: %s", ARCHS[a], err.msg);
        CHECK_INT(r.ftype, 0); /* all F32 */
        int nv1 = 0, nv2 = 0, n1 = 0, n2 = 0;
        int32_t ids1[64], ids2[64];
        float *l1 = logits(dir, text, &nv1, ids1, &n1), *l2 = logits(out, text, &nv2, ids2, &n2);
        CHECK(n1 == n2 && n1 > 0 && memcmp(ids1, ids2, sizeof(int32_t) * (size_t)n1) == 0);
        if (l1 && l2 && nv1 == nv2) {
            double mx = 0, d = 0;
            for (int i = 0; i < nv1; i++) {
                mx = fmax(mx, fabs(l1[i]));
                d = fmax(d, fabs((double)l1[i] - l2[i]));
            }
            CHECK_MSG(d <= 1e-5 * mx, "%s: HF vs converted GGUF max|d| %g (max|logit| %g)", ARCHS[a], d, mx);
        }
        free(l1), free(l2);
        if (a == 0) {
            wick_model *m = wick_model_load(out, NULL, &err);
            wick_sampling s = wick_sampling_default();
            CHECK(m && wick_model_sampling_defaults(m, &s) && fabsf(s.temperature - 0.6f) < 1e-6f && s.top_k == 20 &&
                  fabsf(s.top_p - 0.9f) < 1e-6f && fabsf(s.repeat_penalty - 1.1f) < 1e-6f);
            wick_model_free(m);
            /* --outtype f16: matrices F16, vectors F32; from HF straight to Q4_K_M */
            CHECK(model_convert(dir, tmp("f16.gguf"), "f16", 0, NULL, NULL, &r, &err) == 0 && r.ftype == 1);
            gguf_file *f = gguf_open(tmp("f16.gguf"), &err);
            CHECK(f && file_type_of(f, "blk.0.attn_q.weight") == WICK_F16 && file_type_of(f, "blk.0.attn_norm.weight") == WICK_F32);
            gguf_close(f);
            quantize_params p = {.type = "Q4_K_M"};
            CHECK(model_quantize(dir, tmp("hfq.gguf"), &p, NULL, &err) == 0);
            m = wick_model_load(tmp("hfq.gguf"), NULL, &err);
            CHECK(m != NULL);
            wick_model_free(m);
        }
    }
}


/* ---- the other architectures ---- */

/* Tensors of GGUF file a missing from b or different there (type, shape, bytes),
 * plus b's tensors a lacks; -1 if either does not open. */
static int tensors_differ(const char *a, const char *b) {
    wick_error err;
    gguf_file *fa = gguf_open(a, &err), *fb = gguf_open(b, &err);
    int diff = -1;
    if (fa && fb) {
        diff = abs(gguf_n_tensors(fa) - gguf_n_tensors(fb));
        for (int i = 0; i < gguf_n_tensors(fa); i++) {
            const wick_tensor *ta = gguf_tensor(fa, i), *tb = gguf_find_tensor(fb, ta->name);
            const bool same = tb && tb->type == ta->type && tb->n_dims == ta->n_dims &&
                              memcmp(tb->ne, ta->ne, sizeof ta->ne) == 0 && tb->nbytes == ta->nbytes &&
                              memcmp(tb->data, ta->data, ta->nbytes) == 0;
            if (!same) fprintf(stderr, "  %s differs between %s and %s\n", ta->name, a, b);
            diff += !same;
        }
    }
    if (fa) gguf_close(fa);
    if (fb) gguf_close(fb);
    return diff;
}

/* max |logits(a) - logits(b)| / max|logits(a)| on one prompt; the token ids must agree. */
static double logit_gap(const char *a, const char *b) {
    const char *text = "Once upon a time, a small robot";
    int nv1 = 0, nv2 = 0, n1 = 0, n2 = 0;
    int32_t ids1[64], ids2[64];
    float *l1 = logits(a, text, &nv1, ids1, &n1), *l2 = logits(b, text, &nv2, ids2, &n2);
    double mx = 0, d = INFINITY;
    if (l1 && l2 && nv1 == nv2 && n1 == n2 && n1 > 0 && memcmp(ids1, ids2, sizeof(int32_t) * (size_t)n1) == 0) {
        d = 0;
        for (int i = 0; i < nv1; i++) {
            mx = fmax(mx, fabs(l1[i]));
            d = fmax(d, fabs((double)l1[i] - l2[i]));
        }
        d = mx > 0 ? d / mx : d;
    }
    free(l1), free(l2);
    return d;
}

/* Set (value JSON) or remove (value NULL) a key of dir/config.json. */
static void edit_config(const char *dir, const char *key, const char *value) {
    char path[256];
    snprintf(path, sizeof path, "%s/config.json", dir);
    wick_error err;
    cJSON *cfg = json_read_file(path, &err);
    CHECK(cfg != NULL);
    if (!cfg) return;
    cJSON_DeleteItemFromObjectCaseSensitive(cfg, key);
    if (value) cJSON_AddItemToObject(cfg, key, cJSON_Parse(value));
    char *text = cJSON_Print(cfg);
    write_text(path, text);
    free(text);
    cJSON_Delete(cfg);
}

static void copy_file(const char *from, const char *to) {
    wick_error err;
    size_t n = 0;
    char *b = file_read_all(from, &n, &err);
    FILE *f = b ? fopen(to, "wb") : NULL;
    CHECK_MSG(f && fwrite(b, 1, n, f) == n, "copy %s", from);
    if (f) fclose(f);
    free(b);
}

/* Rewrite a gemma3 HF directory as Gemma3ForConditionalGeneration's checkpoint:
 * config {"model_type": "gemma3", "text_config": {...}} without the keys at
 * Gemma3TextConfig's defaults, the text model's "model.X" as "<prefix>X", and
 * a vision tensor the conversion must leave out. */
static void make_multimodal(const char *text_dir, const char *dir, const char *prefix) {
    char a[256], b[256];
    wick_error err;
    mkdir(dir, 0755);
    static const char *const FILES[] = {"tokenizer.json", "tokenizer_config.json", "generation_config.json"};
    for (int i = 0; i < 3; i++) {
        snprintf(a, sizeof a, "%s/%s", text_dir, FILES[i]);
        snprintf(b, sizeof b, "%s/%s", dir, FILES[i]);
        if (file_exists(a)) copy_file(a, b);
    }
    snprintf(a, sizeof a, "%s/config.json", text_dir);
    cJSON *text = json_read_file(a, &err), *cfg = cJSON_CreateObject();
    CHECK(text != NULL);
    if (!text) return;
    static const char *const DEFAULTED[] = {"rope_local_base_freq", "sliding_window_pattern", "tie_word_embeddings",
                                            "model_type", "architectures"};
    for (int i = 0; i < 5; i++) cJSON_DeleteItemFromObjectCaseSensitive(text, DEFAULTED[i]);
    cJSON_AddStringToObject(cfg, "model_type", "gemma3");
    cJSON_AddItemToObject(cfg, "text_config", text);
    char *json = cJSON_Print(cfg);
    snprintf(b, sizeof b, "%s/config.json", dir);
    write_text(b, json);
    free(json);
    cJSON_Delete(cfg);
    st_set *st = st_open_dir(text_dir, &err);
    st_writer *w = st_writer_new();
    CHECK(st && w);
    for (int i = 0; st && w && i < st_n_tensors(st); i++) {
        const wick_tensor *t = st_tensor(st, i);
        char name[256];
        if (strncmp(t->name, "model.", 6) == 0) snprintf(name, sizeof name, "%s%s", prefix, t->name + 6);
        else snprintf(name, sizeof name, "%s", t->name);
        CHECK(st_add_tensor(w, name, t->type, t->n_dims, t->ne, t->data, t->nbytes, &err) == 0);
    }
    const float patch[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    const int64_t ne[WICK_MAX_DIMS] = {4, 2, 1, 1};
    CHECK(w && st_add_tensor(w, "vision_tower.vision_model.embeddings.patch_embedding.weight", WICK_F32, 2, ne, patch,
                             sizeof patch, &err) == 0);
    snprintf(b, sizeof b, "%s/model.safetensors", dir);
    CHECK_MSG(w && st_write(w, b, &err) == 0, "write %s", b);
    st_writer_free(w);
    st_close(st);
}

static void test_convert_archs(void) {
    static const struct {
        const char *arch, *rope;
    } ARCHS[] = {{"granite", NULL}, {"gemma2", NULL},   {"gemma3", NULL},   {"phi3", NULL},
                 {"phi3", "longrope"}, {"qwen2moe", NULL}, {"qwen3moe", NULL}, {"mixtral", NULL}};
    wick_error err;
    for (size_t a = 0; a < sizeof ARCHS / sizeof ARCHS[0]; a++) {
        const char *arch = ARCHS[a].arch;
        char hf[128], made[160], out[160];
        snprintf(hf, sizeof hf, "%s/hf-%s%s", tmpdir, arch, ARCHS[a].rope ? "-lr" : "");
        snprintf(made, sizeof made, "%s.gguf", hf);
        snprintf(out, sizeof out, "%s-conv.gguf", hf);
        if (make_opt(arch, "hf", "tiny", "f32", ARCHS[a].rope, NULL, hf) < 0 ||
            make_opt(arch, "gguf", "tiny", "f32", ARCHS[a].rope, NULL, made) < 0)
            continue;
        quantize_report r;
        CHECK_MSG(model_convert(hf, out, "auto", 2, NULL, NULL, &r, &err) == 0, "convert %s: %s", arch, err.msg);
        CHECK_MSG(tensors_differ(made, out) == 0, "%s: converted tensors differ from make-test-model's GGUF", arch);
        const double to_made = logit_gap(made, out), to_hf = logit_gap(hf, out);
        CHECK_MSG(to_made == 0, "%s: converted vs make-test-model GGUF logits max|d| %g", arch, to_made);
        CHECK_MSG(to_hf <= 1e-5, "%s: HF vs converted logits max|d|/max %g", arch, to_hf);
    }
    /* Gemma 3's multimodal layout, under either text prefix: the same file */
    static const char *const PREFIXES[] = {"language_model.model.", "model.language_model."};
    for (int i = 0; i < 2; i++) {
        char mm[128];
        snprintf(mm, sizeof mm, "%s/mm-gemma3-%d", tmpdir, i);
        make_multimodal(tmp("hf-gemma3"), mm, PREFIXES[i]);
        CHECK_MSG(model_convert(mm, tmp("mm.gguf"), "auto", 2, NULL, NULL, NULL, &err) == 0, "convert %s: %s", mm,
                  err.msg);
        CHECK_MSG(tensors_differ(tmp("hf-gemma3-conv.gguf"), tmp("mm.gguf")) == 0, "multimodal %s", PREFIXES[i]);
        CHECK(logit_gap(mm, tmp("mm.gguf")) <= 1e-5);
    }
    /* config values that only some keys carry: the HF logits survive */
    static const struct {
        const char *arch, *key, *value;
    } EDITS[] = {
        {"gemma2", "query_pre_attn_scalar", "20"}, /* attention.scale */
        {"gemma2", "tie_word_embeddings", NULL},   /* Gemma ties by default */
        {"gemma2", "final_logit_softcapping", "null"},
        {"qwen3moe", "norm_topk_prob", "false"}, /* expert_weights_norm */
        {"phi3", "partial_rotary_factor", "0.5"},
    };
    for (size_t e = 0; e < sizeof EDITS / sizeof EDITS[0]; e++) {
        char dir[128];
        snprintf(dir, sizeof dir, "%s/ed-%zu", tmpdir, e);
        if (make(EDITS[e].arch, "hf", "tiny", "f32", dir) < 0) continue;
        edit_config(dir, EDITS[e].key, EDITS[e].value);
        CHECK_MSG(model_convert(dir, tmp("ed.gguf"), "auto", 2, NULL, NULL, NULL, &err) == 0, "convert %s %s: %s",
                  EDITS[e].arch, EDITS[e].key, err.msg);
        const double d = logit_gap(dir, tmp("ed.gguf"));
        CHECK_MSG(d <= 1e-5, "%s with %s = %s: HF vs converted max|d|/max %g", EDITS[e].arch, EDITS[e].key,
                  EDITS[e].value ? EDITS[e].value : "(none)", d);
    }
    /* what a GGUF file cannot hold: a clear error, no file */
    if (make_opt("qwen3moe", "hf", "tiny", "f32", NULL, "1", tmp("dense-moe")) == 0) {
        CHECK(model_convert(tmp("dense-moe"), tmp("e5.gguf"), "auto", 0, NULL, NULL, NULL, &err) < 0 &&
              strstr(err.msg, "layer 1 is dense") && absent(tmp("e5.gguf")));
    }
    if (make("gemma2", "hf", "tiny", "f32", tmp("all-sliding")) == 0) {
        edit_config(tmp("all-sliding"), "layer_types", "[\"sliding_attention\", \"sliding_attention\"]");
        quantize_params p = {.type = "Q8_0"};
        CHECK(model_quantize(tmp("all-sliding"), tmp("e6.gguf"), &p, NULL, &err) < 0 &&
              strstr(err.msg, "layer 1 slides a 16-token window") && absent(tmp("e6.gguf")));
    }
    /* wick quantize from HF: the bytes of quantizing make-test-model's GGUF */
    static const char *const QARCHS[] = {"qwen2moe", "qwen3moe", "mixtral", "gemma2", "phi3"};
    for (int a = 0; a < 5; a++) {
        char hf[128], made[160];
        snprintf(hf, sizeof hf, "%s/hf256-%s", tmpdir, QARCHS[a]);
        snprintf(made, sizeof made, "%s.gguf", hf);
        if (make(QARCHS[a], "hf", "tiny256", "f32", hf) < 0 || make(QARCHS[a], "gguf", "tiny256", "f32", made) < 0)
            continue;
        quantize_params p = {.type = "Q4_K_M", .n_threads = 2};
        CHECK_MSG(model_quantize(hf, tmp("qh.gguf"), &p, NULL, &err) == 0, "quantize %s HF: %s", QARCHS[a], err.msg);
        CHECK_MSG(model_quantize(made, tmp("qg.gguf"), &p, NULL, &err) == 0, "quantize %s GGUF: %s", QARCHS[a], err.msg);
        CHECK_MSG(tensors_differ(tmp("qg.gguf"), tmp("qh.gguf")) == 0, "%s: Q4_K_M from HF differs from GGUF's", QARCHS[a]);
        gguf_file *f = gguf_open(tmp("qh.gguf"), &err);
        CHECK(f && file_type_of(f, "blk.0.ffn_down_exps.weight") == (a < 3 ? WICK_Q4_K : -1));
        CHECK(f && file_type_of(f, "blk.1.ffn_down_exps.weight") == (a < 3 ? WICK_Q6_K : -1));
        CHECK(f && file_type_of(f, "blk.0.ffn_gate_inp.weight") == (a < 3 ? WICK_F32 : -1));
        gguf_close(f);
        CHECK(logit_gap(tmp("qg.gguf"), tmp("qh.gguf")) == 0);
    }
}

static void test_errors(void) {
    wick_error err;
    char src[256], empty[256];
    snprintf(src, sizeof src, "%s", tmp("err-src.gguf"));
    if (make("qwen3", "gguf", "tiny", "f32", src) < 0) return;
    quantize_params p = {.type = "Q4_K_Z"};
    CHECK(model_quantize(src, tmp("e1.gguf"), &p, NULL, &err) < 0 && strstr(err.msg, "Q4_K_Z") && strstr(err.msg, "Q4_K_M"));
    CHECK(absent(tmp("e1.gguf")));
    p.type = "Q4_K_M";
    p.output_type = "q9_9";
    CHECK(model_quantize(src, tmp("e1.gguf"), &p, NULL, &err) < 0 && strstr(err.msg, "--output-type"));
    p.output_type = NULL;
    CHECK(model_quantize(tmp("nope.gguf"), tmp("e1.gguf"), &p, NULL, &err) < 0 && strstr(err.msg, "nope.gguf"));
    CHECK(model_quantize(src, tmpdir, &p, NULL, &err) < 0 && strstr(err.msg, "cannot create"));
    CHECK(model_quantize(src, tmp("no/such/dir/x.gguf"), &p, NULL, &err) < 0 && strstr(err.msg, "cannot create"));
    CHECK(model_quantize(src, src, &p, NULL, &err) < 0 && strstr(err.msg, "overwrite"));
    wick_model *still = wick_model_load(src, NULL, &err); /* the input is untouched */
    CHECK(still != NULL);
    wick_model_free(still);
    /* a file that is not GGUF */
    write_text(tmp("junk.gguf"), "not a model");
    CHECK(model_quantize(tmp("junk.gguf"), tmp("e2.gguf"), &p, NULL, &err) < 0 && strstr(err.msg, "junk.gguf"));
    CHECK(absent(tmp("e2.gguf")));
    /* an HF directory without config.json */
    snprintf(empty, sizeof empty, "%s", tmp("emptydir"));
    mkdir(empty, 0755);
    CHECK(model_convert(empty, tmp("e3.gguf"), "auto", 0, NULL, NULL, NULL, &err) < 0 && strstr(err.msg, "config.json"));
    CHECK(model_quantize(empty, tmp("e3.gguf"), &p, NULL, &err) < 0 && strstr(err.msg, "config.json"));
    CHECK(absent(tmp("e3.gguf")));
    /* convert takes an HF directory, and one of four outtypes */
    CHECK(model_convert(src, tmp("e4.gguf"), "auto", 0, NULL, NULL, NULL, &err) < 0 && strstr(err.msg, "Hugging Face"));
    CHECK(model_convert(empty, tmp("e4.gguf"), "q4_0", 0, NULL, NULL, NULL, &err) < 0 && strstr(err.msg, "outtype"));
}

int main(void) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/wick-convert-XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    RUN(test_rules);
    RUN(test_quantize_gguf);
    RUN(test_convert_hf);
    RUN(test_convert_archs);
    RUN(test_errors);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    return check_summary("test_convert");
}
